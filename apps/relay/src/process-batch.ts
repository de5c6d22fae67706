import { performance } from "node:perf_hooks";
import { Deadline } from "@outbox/client";
import type { Logger } from "@outbox/shared";
import { BatchOutcome, type RetryPolicy } from "./batch-outcome.js";
import { buildEntry, type TopicResolver } from "./build-entry.js";
import type { ClaimedRow } from "./claim-batch.js";
import { type BatchReport, type CommitDeps, commitBatch } from "./commit-batch.js";
import type { DrainLink } from "./drain-link.js";
import { inParallel } from "./in-parallel.js";
import type { OutageBackoff } from "./outage-backoff.js";
import { type Chunk, planChunks, type ReadyRow } from "./plan-chunks.js";
import { planWaves } from "./plan-waves.js";
import type { ChunkPublisher } from "./publish-chunk.js";

export interface BatchSettings extends RetryPolicy {
  readonly relayId: string;
  readonly leaseMs: number;
  /** Lease time kept back at the end for the batch's last marks and releases. */
  readonly leaseMarginMs: number;
  readonly publishConcurrency: number;
  readonly publishTimeoutMs: number;
}

export interface BatchDeps extends Omit<CommitDeps, "relayId"> {
  readonly chunks: ChunkPublisher;
  readonly resolveTopic: TopicResolver;
  readonly markPublished: (ids: readonly string[]) => Promise<void>;
  /** Per topic, how long whole-request failures keep it waiting. */
  readonly outage: OutageBackoff;
  /** The drain's deadline, which every batch's deadline hangs from. */
  readonly drain: DrainLink;
  readonly log?: Logger;
}

/** Rows one claim leased, and when that claim was sent: the lease runs from there, not from the start. */
export interface ClaimedBatch {
  readonly rows: readonly ClaimedRow[];
  /** `performance.now()` just before the claim was sent: the database's lease can only end later. */
  readonly claimedAt: number;
}

/**
 * Sees every row of a claimed batch to an outcome (see BatchOutcome), publishing wave by wave and
 * marking each chunk published right after its response, then commits the rest (`commitBatch`).
 * The batch's deadline ends before its lease could run out under a row still being sent, or with
 * the drain's: either cuts the publishing short.
 */
export async function processBatch(
  settings: BatchSettings,
  deps: BatchDeps,
  { rows, claimedAt }: ClaimedBatch,
): Promise<BatchReport> {
  // Counted from before the claim was sent, not from now: a batch claimed ahead has already spent part
  // of its lease waiting for the batch before it, and the database's lease can only end later than this.
  const leaseEndsAt = claimedAt + settings.leaseMs - settings.leaseMarginMs;
  const batch = Deadline.after(leaseEndsAt - performance.now(), deps.drain.deadline);
  const outcome = new BatchOutcome(settings);

  const sendChunk = async (chunk: Chunk) => {
    // After a failed mark, every chunk sent would be one more the table does not show as published.
    // A request starts only if it can end before the lease, and before the drain deadline: one cut
    // there may already have reached SNS. Rows released unsent are never duplicates.
    const finishesBy = performance.now() + settings.publishTimeoutMs;
    if (
      batch.aborted ||
      outcome.markError !== undefined ||
      finishesBy > batch.expiresAt ||
      finishesBy > deps.drain.endsAt
    ) {
      for (const row of chunk.rows) outcome.release(row);
      return;
    }
    // A topic whose requests fail as a whole gets none until its wait is over: its rows go back to
    // wait with it, and the first request after the wait probes whether it is back.
    const outage = deps.outage.waiting(chunk.topicArn);
    if (outage.waitMs > 0) {
      for (const row of chunk.rows)
        outcome.defer(row, outage.waitMs, `not sent, topic backing off after: ${outage.reason}`);
      return;
    }
    const answer = await deps.chunks.publish(chunk, batch);
    if (answer.published.length > 0) {
      outcome.published += answer.published.length;
      for (const row of answer.published) deps.metrics.published.inc({ topic: row.topic });
      // The slot is freed only once the mark has committed: a chunk the bus took but the table does
      // not yet show as published counts as in flight, so a hard kill re-sends at most
      // RELAY_PUBLISH_CONCURRENCY chunks, never a growing tail of unmarked ones.
      await deps.markPublished(answer.published.map((row) => row.id)).catch((error: unknown) => {
        outcome.markError ??= error;
      });
    }
    if (answer.requestFailure) {
      const { kind, reason } = answer.requestFailure;
      const { waitMs, began } = deps.outage.failed(chunk.topicArn, answer.sentAt, reason);
      if (began) {
        deps.log?.warn(
          { topicArn: chunk.topicArn, kind, reason, waitMs: Math.round(waitMs) },
          "PublishBatch failing as a whole: topic backs off, rows spend no attempts",
        );
      }
      for (const row of answer.unanswered) {
        outcome.defer(row, waitMs, reason);
        deps.metrics.failed.inc({ reason: "request" });
      }
    } else if (answer.abandoned.length === 0) {
      const ended = deps.outage.answered(chunk.topicArn);
      if (ended) deps.log?.info({ topicArn: chunk.topicArn, ...ended }, "PublishBatch answered again");
    }
    for (const { row, reason } of answer.refused) {
      outcome.fail(row, reason);
      deps.metrics.failed.inc({ reason: "entry" });
    }
    for (const row of answer.abandoned) outcome.release(row);
  };

  try {
    for (const wave of planWaves(rows)) {
      const ready: ReadyRow[] = [];
      for (const row of wave) {
        if (outcome.isHeldBack(row)) {
          outcome.release(row);
          continue;
        }
        const built = buildEntry(row, deps.resolveTopic);
        if (built.kind === "ready") {
          ready.push({ row, topicArn: built.topicArn, entry: built.entry, bytes: built.bytes });
          continue;
        }
        outcome.unsendable(row, built.reason);
        deps.metrics.failed.inc({ reason: "unsendable" });
      }
      await inParallel(planChunks(ready), settings.publishConcurrency, sendChunk);
    }
    return await commitBatch(
      outcome,
      { ...deps, relayId: settings.relayId },
      { claimed: rows.length, claimedAt },
    );
  } finally {
    batch.dispose();
  }
}
