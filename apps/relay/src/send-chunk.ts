import { performance } from "node:perf_hooks";
import type { Deadline } from "@outbox/client";
import type { DrainDeadline, Logger } from "@outbox/shared";
import type { BatchOutcome } from "./batch-outcome.js";
import type { PublishedMarker } from "./mark-results.js";
import type { RelayMetrics } from "./metrics.js";
import type { OutageBackoff } from "./outage-backoff.js";
import type { Chunk } from "./plan-chunks.js";
import type { ChunkOutcome, ChunkPublisher } from "./publish-chunk.js";
import { settleSizeRefusals } from "./size-refusals.js";
import type { TopicLimits } from "./topic-limits.js";

export interface ChunkDeps {
  readonly chunks: ChunkPublisher;
  readonly marks: PublishedMarker;
  readonly metrics: RelayMetrics;
  /** Per topic, how long whole-request failures keep it waiting. */
  readonly outage: OutageBackoff;
  /** Per topic, the message-size limit, read again when SNS refuses a message as too long. */
  readonly limits: TopicLimits;
  /** The drain's deadline, which every batch's deadline hangs from. */
  readonly drain: DrainDeadline;
  readonly log?: Logger;
}

export interface ChunkContext {
  /** The batch's deadline: its lease (less the margin for its last marks), or the drain's. */
  readonly batch: Deadline;
  readonly outcome: BatchOutcome;
  /** `deps.marks.failures()` when the batch started: a mark failed since, in any batch, stops it. */
  readonly marksFailedBefore: number;
  readonly settings: { readonly publishTimeoutMs: number };
  readonly deps: ChunkDeps;
}

/**
 * One chunk to its rows' outcome: not sent (released, or deferred while its topic backs off), or
 * published, with the published rows marked before it returns (and its lane is freed), and the
 * answer's other rows recorded as failed, deferred or released.
 */
export async function sendChunk(
  chunk: Chunk,
  { batch, outcome, marksFailedBefore, settings, deps }: ChunkContext,
): Promise<void> {
  // After a failed mark, every chunk sent would be one more the table does not show as published:
  // a mark failed in another batch streaming beside this one counts too.
  // A request starts only if it can end before the lease, and before the drain deadline: one cut
  // there may already have reached SNS. Rows released unsent are never duplicates.
  const finishesBy = performance.now() + settings.publishTimeoutMs;
  if (
    batch.aborted ||
    outcome.markError !== undefined ||
    deps.marks.failures() > marksFailedBefore ||
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
  const sent = await deps.chunks.publish(chunk, batch);
  if (sent.published.length > 0) {
    outcome.published += sent.published.length;
    for (const row of sent.published) deps.metrics.published.inc({ topic: row.topic });
    // The lane is freed only once the mark has committed: a chunk the bus took but the table does
    // not yet show as published counts as in flight, so a hard kill re-sends at most
    // RELAY_PUBLISH_CONCURRENCY chunks, never a growing tail of unmarked ones.
    await deps.marks.mark(sent.published.map((row) => row.id)).catch((error: unknown) => {
      outcome.markError ??= error;
    });
  }
  const answer = await settleSizeRefusals(chunk, sent, outcome, deps, batch);
  recordAnswer(chunk, answer, outcome, deps);
}

/** The rows the answer did not publish, and what the answer says of the topic's outage. */
function recordAnswer(chunk: Chunk, answer: ChunkOutcome, outcome: BatchOutcome, deps: ChunkDeps): void {
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
}
