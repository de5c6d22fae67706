import { performance } from "node:perf_hooks";
import type { OutboxTables as Database } from "@outbox/client";
import type { Kysely } from "kysely";
import type { BatchOutcome } from "./batch-outcome.js";
import type { ClaimedRow } from "./claim-batch.js";
import { markFailed, releaseRows } from "./mark-results.js";
import type { RelayMetrics } from "./metrics.js";

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

export interface CommitDeps {
  readonly db: Kysely<Database>;
  readonly relayId: string;
  readonly metrics: RelayMetrics;
  /** Told about every row as it dies. */
  readonly onDead: (row: ClaimedRow, reason: string) => void;
}

/**
 * Marks what a batch decided (its published rows are marked already, chunk by chunk): the failures
 * and deaths, then the releases; and reports it. Rejects, marking nothing, when a mark of published
 * rows failed: the batch fails and its rows come back when their lease ends.
 */
export async function commitBatch(
  outcome: BatchOutcome,
  deps: CommitDeps,
  { claimed, claimedAt }: { readonly claimed: number; readonly claimedAt: number },
): Promise<BatchReport> {
  if (outcome.markError !== undefined) throw outcome.markError;
  await markFailed(deps.db, deps.relayId, outcome.failures);
  // Announced (log, event, metric) only once markFailed has committed: whoever hears "dead" must
  // find the row dead.
  for (const { row, reason, cause } of outcome.dead) {
    deps.metrics.dead.inc({ reason: cause });
    deps.onDead(row, reason);
  }
  await releaseRows(deps.db, deps.relayId, outcome.released);
  const durationMs = performance.now() - claimedAt;
  deps.metrics.batchSeconds.observe(durationMs / 1_000);
  return {
    claimed,
    published: outcome.published,
    failed: outcome.failed,
    deferred: outcome.deferred,
    dead: outcome.dead.length,
    released: outcome.released.length,
    durationMs,
  };
}
