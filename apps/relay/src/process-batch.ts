import { setMaxListeners } from "node:events";
import { performance } from "node:perf_hooks";
import type { OutboxTables as Database } from "@outbox/client";
import { type BackoffPolicy, backoffMs, type Logger } from "@outbox/shared";
import type { Kysely } from "kysely";
import { buildEntry, type TopicResolver } from "./build-entry.js";
import type { ClaimedRow } from "./claim-batch.js";
import { markFailed, type RowFailure, releaseRows } from "./mark-results.js";
import type { RelayMetrics } from "./metrics.js";
import type { OutageBackoff } from "./outage-backoff.js";
import { type Chunk, planChunks, type ReadyRow } from "./plan-chunks.js";
import { planWaves } from "./plan-waves.js";
import { type ChunkOutcome, publishChunk } from "./publish-chunk.js";
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
  /** Per topic, how long whole-request failures keep it waiting. */
  readonly outage: OutageBackoff;
  /**
   * `performance.now()` at which the drain deadline fires; Infinity until a drain with a budget began.
   * A request that could not finish by then is not started.
   */
  readonly drainEndsAt: () => number;
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
  /** Rows that spent an attempt: SNS refused their entry, or they cannot be sent. */
  readonly failed: number;
  /** Rows sent back to wait without spending an attempt: their request failed as a whole (SNS down). */
  readonly deferred: number;
  readonly dead: number;
  readonly released: number;
  readonly durationMs: number;
}

/**
 * Sees every row of a claimed batch to an outcome: published (marked chunk by chunk, right after each
 * response), failed (backoff or dead), deferred (its request failed as a whole: a wait, no attempt), or
 * released (not sent; free for any relay at once).
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
  /** Logs, once per answer, what does not add up in it, with SNS's request id. */
  const reportAnswer = (chunk: Chunk, outcome: ChunkOutcome) => {
    const { malformed, requestFailure } = outcome;
    if (!malformed && requestFailure?.kind !== "malformed") return;
    deps.log?.warn(
      {
        topicArn: chunk.topicArn,
        requestId: malformed?.requestId ?? requestFailure?.requestId,
        ...malformed,
        reason: requestFailure?.reason,
      },
      "PublishBatch answer malformed: entries it does not list as successful are retried",
    );
  };
  const released: string[] = [];
  let markError: unknown;
  let published = 0;
  // Announced (log, event, metric) only once markFailed has committed: whoever hears "dead" must
  // find the row dead.
  const deadRows: { row: ClaimedRow; reason: string; cause: "attempts" | "unsendable" }[] = [];
  /** SNS refused the row's entry: its own failure, an attempt. */
  const fail = (row: ClaimedRow, reason: string) => {
    const attempts = row.attempts + 1;
    const isDead = attempts >= settings.maxAttempts;
    failures.push({
      id: row.id,
      delayMs: backoffMs(attempts, settings.backoff),
      error: reason,
      attempt: true,
      dead: isDead,
    });
    deps.metrics.failed.inc({ reason: "entry" });
    if (isDead) deadRows.push({ row, reason: `after ${attempts} attempts: ${reason}`, cause: "attempts" });
  };
  /** The bus is down for the row's topic: it waits `delayMs`, spending no attempt. */
  let deferred = 0;
  const defer = (row: ClaimedRow, delayMs: number, reason: string) => {
    failures.push({ id: row.id, delayMs: Math.ceil(delayMs), error: reason, attempt: false, dead: false });
    deferred += 1;
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
      // Once draining, a request starts only if it can end before the drain deadline: one cut at the
      // deadline may already have reached SNS, and its rows would be sent again after the restart.
      // Rows released unsent are never duplicates.
      const finishesBy = performance.now() + settings.publishTimeoutMs;
      const stopSending =
        batchSignal.aborted ||
        markError !== undefined ||
        finishesBy > leaseEndsAt ||
        finishesBy > deps.drainEndsAt();
      if (stopSending) {
        for (const row of chunk.rows) {
          released.push(row.id);
          stopKey(row);
        }
        return;
      }
      // A topic whose requests fail as a whole gets none until its wait is over: its rows go back to
      // wait with it, and the first request after the wait probes whether it is back.
      const outage = deps.outage.waiting(chunk.topicArn);
      if (outage.waitMs > 0) {
        for (const row of chunk.rows) {
          defer(row, outage.waitMs, `not sent, topic backing off after: ${outage.reason}`);
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
      reportAnswer(chunk, outcome);
      if (outcome.requestFailure) {
        const { kind, reason } = outcome.requestFailure;
        const { waitMs, began } = deps.outage.failed(chunk.topicArn, outcome.sentAt, reason);
        if (began) {
          deps.log?.warn(
            { topicArn: chunk.topicArn, kind, reason, waitMs: Math.round(waitMs) },
            "PublishBatch failing as a whole: topic backs off, rows spend no attempts",
          );
        }
        for (const row of outcome.unanswered) {
          defer(row, waitMs, reason);
          deps.metrics.failed.inc({ reason: "request" });
          stopKey(row);
        }
      } else if (outcome.abandoned.length === 0) {
        const ended = deps.outage.answered(chunk.topicArn);
        if (ended) deps.log?.info({ topicArn: chunk.topicArn, ...ended }, "PublishBatch answered again");
      }
      for (const { row, reason } of outcome.refused) {
        fail(row, reason);
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
        // Dead at once. Its key's later rows wait behind it, as behind any dead row (see claim-batch.ts),
        // until an operator requeues it (a topic mapping fixed) or skips it.
        failures.push({ id: row.id, delayMs: 0, error: built.reason, attempt: true, dead: true });
        deps.metrics.failed.inc({ reason: "unsendable" });
        deadRows.push({ row, reason: built.reason, cause: "unsendable" });
        stopKey(row);
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
      failed: failures.length - deferred,
      deferred,
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
