import { setMaxListeners } from "node:events";
import { performance } from "node:perf_hooks";
import { type BackoffPolicy, backoffMs, type Database, type Logger } from "@outbox/shared";
import type { Kysely } from "kysely";
import { buildEntry, type TopicResolver } from "./build-entry.js";
import type { ClaimedRow } from "./claim-batch.js";
import { markFailed, type RowFailure, releaseRows } from "./mark-results.js";
import type { FailureReason, RelayMetrics } from "./metrics.js";
import { type Chunk, planChunks, type ReadyRow } from "./plan-chunks.js";
import { planWaves } from "./plan-waves.js";
import { publishChunk } from "./publish-chunk.js";
import type { Publisher } from "./publisher.js";

export interface BatchSettings {
  readonly relayId: string;
  readonly batchSize: number;
  readonly leaseMs: number;
  /** Lease time kept back at the end for the batch's last marks and releases. */
  readonly leaseMarginMs: number;
  readonly publishConcurrency: number;
  readonly publishTimeoutMs: number;
  readonly maxAttempts: number;
  readonly backoff: BackoffPolicy;
}

export interface BatchDeps {
  readonly db: Kysely<Database>;
  readonly publisher: Publisher;
  readonly resolveTopic: TopicResolver;
  readonly markPublished: (ids: readonly string[]) => Promise<void>;
  readonly metrics: RelayMetrics;
  readonly log?: Logger;
  /** Told about every row as it dies. */
  readonly onDead: (row: ClaimedRow, reason: string) => void;
}

/** Rows one claim leased, and when that claim was sent: the lease runs from there, not from the start. */
export interface ClaimedBatch {
  readonly rows: readonly ClaimedRow[];
  /** `performance.now()` just before the claim was sent: the database's lease can only end later. */
  readonly claimedAt: number;
}

export interface BatchReport {
  readonly claimed: number;
  readonly published: number;
  readonly failed: number;
  readonly dead: number;
  readonly released: number;
  readonly durationMs: number;
}

/**
 * Sees every row of a claimed batch to an outcome: published (marked chunk by chunk, right after each
 * response), failed (backoff or dead), or released (not sent; free for any relay at once).
 * `abandon` aborting (the drain deadline) cuts the publishing short; the batch's own lease timer does
 * the same before the lease could run out under a row still being sent.
 */
export async function processBatch(
  settings: BatchSettings,
  deps: BatchDeps,
  { rows, claimedAt }: ClaimedBatch,
  abandon: AbortSignal,
): Promise<BatchReport> {
  // Counted from before the claim was sent, not from now: a batch claimed ahead has already spent part
  // of its lease waiting for the batch before it, and the database's lease can only end later than this.
  const leaseEndsAt = claimedAt + settings.leaseMs - settings.leaseMarginMs;
  const leaseController = new AbortController();
  const leaseTimer = setTimeout(
    () => leaseController.abort(new Error("lease about to expire")),
    Math.max(0, leaseEndsAt - performance.now()),
  );
  const onAbandon = () => leaseController.abort(abandon.reason);
  if (abandon.aborted) onAbandon();
  else abandon.addEventListener("abort", onAbandon, { once: true });
  const batchSignal = leaseController.signal;
  // Each chunk in flight links its call signal to this one; that many listeners are expected, not a leak.
  setMaxListeners(settings.publishConcurrency + 10, batchSignal);

  const failures: RowFailure[] = [];
  const released: string[] = [];
  let markError: unknown;
  let published = 0;
  // Announced (log, event, metric) only once markFailed has committed: whoever hears "dead" must
  // find the row dead.
  const deadRows: { row: ClaimedRow; reason: string; cause: "attempts" | "unsendable" }[] = [];
  const fail = (row: ClaimedRow, reason: string, kind: Exclude<FailureReason, "unsendable">) => {
    const attempts = row.attempts + 1;
    const isDead = attempts >= settings.maxAttempts;
    failures.push({
      id: row.id,
      delayMs: backoffMs(attempts, settings.backoff),
      error: reason,
      dead: isDead,
    });
    deps.metrics.failed.inc({ reason: kind });
    if (isDead) deadRows.push({ row, reason: `after ${attempts} attempts: ${reason}`, cause: "attempts" });
  };

  try {
    // A key whose row failed (or was cut off) publishes nothing more in this batch: its later rows would
    // overtake it. They are released and come back behind it, blocked by the claim until it succeeds.
    const stoppedKeys = new Set<string>();
    const stopKey = (row: ClaimedRow) => {
      if (row.orderingKey !== null) stoppedKeys.add(row.orderingKey);
    };

    const sendChunk = async (chunk: Chunk) => {
      // After a failed mark, every chunk sent would be one more the table does not show as
      // published, to be sent again: stop sending until the database answers again.
      const stopSending =
        batchSignal.aborted ||
        markError !== undefined ||
        performance.now() + settings.publishTimeoutMs > leaseEndsAt;
      if (stopSending) {
        for (const row of chunk.rows) {
          released.push(row.id);
          stopKey(row);
        }
        return;
      }
      const outcome = await publishChunk(
        deps.publisher,
        chunk,
        batchSignal,
        settings.publishTimeoutMs,
        deps.metrics,
      );
      if (outcome.published.length > 0) {
        const ids = outcome.published.map((row) => row.id);
        published += ids.length;
        for (const row of outcome.published) deps.metrics.published.inc({ topic: row.topic });
        // The slot is freed only once the mark has committed: a chunk the bus took but the table does
        // not yet show as published counts as in flight, so a hard kill re-sends at most
        // RELAY_PUBLISH_CONCURRENCY chunks, never a growing tail of unmarked ones.
        await deps.markPublished(ids).catch((error: unknown) => {
          markError ??= error;
        });
      }
      for (const { row, reason, kind } of outcome.failed) {
        fail(row, reason, kind);
        stopKey(row);
      }
      for (const row of outcome.abandoned) {
        released.push(row.id);
        stopKey(row);
      }
    };

    for (const wave of planWaves(rows)) {
      const ready: ReadyRow[] = [];
      for (const row of wave) {
        if (row.orderingKey !== null && stoppedKeys.has(row.orderingKey)) {
          released.push(row.id);
          continue;
        }
        const built = buildEntry(row, deps.resolveTopic);
        if (built.kind === "ready") {
          ready.push({ row, topicArn: built.topicArn, entry: built.entry, bytes: built.bytes });
          continue;
        }
        // Dead at once; a dead row no longer holds its key back (the claim ignores dead rows too).
        failures.push({ id: row.id, delayMs: 0, error: built.reason, dead: true });
        deps.metrics.failed.inc({ reason: "unsendable" });
        deadRows.push({ row, reason: built.reason, cause: "unsendable" });
      }
      await inParallel(planChunks(ready), settings.publishConcurrency, sendChunk);
    }

    if (markError !== undefined) throw markError;
    await markFailed(deps.db, settings.relayId, failures);
    for (const { row, reason, cause } of deadRows) {
      deps.metrics.dead.inc({ reason: cause });
      deps.onDead(row, reason);
    }
    await releaseRows(deps.db, settings.relayId, released);
    const durationMs = performance.now() - claimedAt;
    deps.metrics.batchSeconds.observe(durationMs / 1_000);
    return {
      claimed: rows.length,
      published,
      failed: failures.length,
      dead: deadRows.length,
      released: released.length,
      durationMs,
    };
  } finally {
    clearTimeout(leaseTimer);
    abandon.removeEventListener("abort", onAbandon);
  }
}

/** Runs `work` over `items` with at most `limit` running at once. */
async function inParallel<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
