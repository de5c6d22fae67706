import type { Deadline } from "@outbox/client";
import type { BatchOutcome } from "./batch-outcome.js";
import type { ClaimedRow } from "./claim-batch.js";
import type { RelayMetrics } from "./metrics.js";
import type { Chunk } from "./plan-chunks.js";
import type { ChunkOutcome } from "./publish-chunk.js";
import type { TopicLimits } from "./topic-limits.js";

/**
 * SNS's words for "over the topic's MaximumMessageSize": an entry's `InvalidParameter: … Message
 * too long`, or the whole request's `BatchRequestTooLong` (its SDK exception, …Exception).
 */
const TOO_LONG = /BatchRequestTooLong|Message too long/i;

export interface SizeRefusalDeps {
  readonly limits: TopicLimits;
  readonly metrics: RelayMetrics;
}

/**
 * What SNS refused as too long becomes, after the topic's limit was read again; returns the answer
 * without those rows, for the usual bookkeeping. SNS only refuses a size the relay checked when the
 * topic's limit changed since it was read, so the row is retried (released, no attempt) once the
 * fresh limit differs from the one its request was planned with and it fits that; over it, it dies
 * with the limit in the reason. Refused again under the same limit, a row dies (an entry: SNS
 * measures it over the limit, and the same bytes will not fit), or spends an attempt (a whole
 * request: its rows may fit in smaller ones, and RELAY_MAX_ATTEMPTS ends it if not). Never a topic
 * outage: a request refused for its size says nothing about SNS being down. When the limit cannot
 * be read, the row spends an attempt.
 */
export async function settleSizeRefusals(
  chunk: Chunk,
  answer: ChunkOutcome,
  outcome: BatchOutcome,
  deps: SizeRefusalDeps,
  batch: Deadline,
): Promise<ChunkOutcome> {
  const requestTooLong = answer.requestFailure !== undefined && TOO_LONG.test(answer.requestFailure.reason);
  const entriesTooLong = answer.refused.filter(({ reason }) => TOO_LONG.test(reason));
  if (!requestTooLong && entriesTooLong.length === 0) return answer;

  const fresh = await deps.limits.refresh(chunk.topicArn, batch);
  const sizeOf = (row: ClaimedRow) => chunk.sizes[chunk.rows.indexOf(row)] ?? Number.POSITIVE_INFINITY;
  const settle = (row: ClaimedRow, refusal: string, whole: boolean) => {
    const bytes = sizeOf(row);
    if (fresh === undefined) {
      // Nothing learnt: an attempt, so that a limit that stays unreadable ends in a dead row, not a loop.
      outcome.fail(
        row,
        `SNS refused it as too long (${refusal}) and the MaximumMessageSize of ${chunk.topicArn} could not be read again`,
      );
      deps.metrics.failed.inc({ reason: "entry" });
    } else if (bytes > fresh) {
      outcome.unsendable(
        row,
        `SNS refused it as too long (${refusal}): ${bytes} bytes, over the ${fresh}-byte MaximumMessageSize of ${chunk.topicArn} (read again after the refusal)`,
      );
      deps.metrics.failed.inc({ reason: "unsendable" });
    } else if (fresh !== chunk.limitBytes) {
      outcome.release(row);
    } else if (whole) {
      outcome.fail(
        row,
        `SNS refused the request as too long (${refusal}) though its ${chunk.bytes} bytes are within the ${fresh}-byte MaximumMessageSize of ${chunk.topicArn}`,
      );
      deps.metrics.failed.inc({ reason: "entry" });
    } else {
      outcome.unsendable(
        row,
        `SNS refused it as too long (${refusal}) though its ${bytes} bytes are within the ${fresh}-byte MaximumMessageSize of ${chunk.topicArn}, read again after the refusal`,
      );
      deps.metrics.failed.inc({ reason: "unsendable" });
    }
  };

  if (requestTooLong) {
    for (const row of answer.unanswered) settle(row, answer.requestFailure?.reason ?? "", true);
  }
  for (const { row, reason } of entriesTooLong) settle(row, reason, false);
  const settled = new Set(entriesTooLong.map(({ row }) => row));
  return {
    ...answer,
    refused: answer.refused.filter(({ row }) => !settled.has(row)),
    ...(requestTooLong ? { unanswered: [], requestFailure: undefined } : {}),
  };
}
