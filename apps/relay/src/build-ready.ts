import type { Deadline } from "@outbox/client";
import type { BatchOutcome } from "./batch-outcome.js";
import { type BuiltEntry, buildEntry, type TopicResolver } from "./build-entry.js";
import type { ClaimedRow } from "./claim-batch.js";
import type { RelayMetrics } from "./metrics.js";
import type { ReadyRow } from "./plan-chunks.js";
import type { TopicLimits } from "./topic-limits.js";

export interface ReadyDeps {
  readonly resolveTopic: TopicResolver;
  /** RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS: older claim-checked rows are unsendable. */
  readonly claimCheckSendWithinHours: number;
  readonly limits: TopicLimits;
  readonly metrics: RelayMetrics;
}

/**
 * Rows that may go out now (no earlier row of their key is unsent) as entries ready to pack, the
 * rest recorded in `outcome`: held back behind their key (released), or unsendable (dead at once). A
 * row over its topic's limit as last read dies only after that limit was read again, once per topic
 * and call: the topic's MaximumMessageSize may have been raised since, and a row killed on a stale
 * limit would wait for an operator for nothing.
 */
export async function buildReady(
  rows: readonly ClaimedRow[],
  outcome: BatchOutcome,
  deps: ReadyDeps,
  batch: Deadline,
): Promise<ReadyRow[]> {
  const ready: ReadyRow[] = [];
  const oversize: ClaimedRow[] = [];
  const limitFor = (topicArn: string) => deps.limits.bytesFor(topicArn);
  for (const row of rows) {
    if (outcome.isHeldBack(row)) {
      outcome.release(row);
      continue;
    }
    const built = buildEntry(row, deps.resolveTopic, limitFor, deps.claimCheckSendWithinHours);
    if (built.kind === "oversize") oversize.push(row);
    else take(row, built, ready, outcome, deps);
  }
  if (oversize.length === 0) return ready;

  const stale = [...new Set(oversize.map((row) => deps.resolveTopic(row.topic) ?? ""))];
  const fresh = new Map(
    await Promise.all(
      stale.map(async (topicArn) => [topicArn, await deps.limits.refresh(topicArn, batch)] as const),
    ),
  );
  for (const row of oversize) {
    const built = buildEntry(row, deps.resolveTopic, limitFor, deps.claimCheckSendWithinHours);
    if (built.kind === "oversize" && fresh.get(built.topicArn) === undefined) {
      // The limit could not be read: an attempt, not death, so that a passing failure to read a
      // raised limit does not kill the row; one that lasts ends in a dead row after the attempts.
      outcome.fail(row, `${built.reason}, which could not be read again`);
      deps.metrics.failed.inc({ reason: "entry" });
    } else take(row, built, ready, outcome, deps);
  }
  return ready;
}

function take(
  row: ClaimedRow,
  built: BuiltEntry,
  ready: ReadyRow[],
  outcome: BatchOutcome,
  deps: ReadyDeps,
): void {
  if (built.kind === "ready") {
    const { topicArn, entry, bytes, limitBytes } = built;
    ready.push({ row, topicArn, entry, bytes, limitBytes });
    return;
  }
  outcome.unsendable(row, built.reason);
  deps.metrics.failed.inc({ reason: "unsendable" });
}
