import { performance } from "node:perf_hooks";
import { Deadline } from "@outbox/client";
import { BatchOutcome, type RetryPolicy } from "./batch-outcome.js";
import type { TopicResolver } from "./build-entry.js";
import type { ClaimedRow } from "./claim-batch.js";
import { type BatchReport, type CommitDeps, commitBatch } from "./commit-batch.js";
import { type StreamDeps, streamRows } from "./stream-rows.js";

export interface BatchSettings extends RetryPolicy {
  readonly relayId: string;
  readonly leaseMs: number;
  /** Lease time kept back at the end for the batch's last marks and releases. */
  readonly leaseMarginMs: number;
  /** The longest one PublishBatch may take: no chunk starts that could not end in time. */
  readonly publishTimeoutMs: number;
}

export interface BatchDeps extends Omit<CommitDeps, "relayId">, StreamDeps {
  readonly resolveTopic: TopicResolver;
}

/** Rows one claim leased, and when that claim was sent: the lease runs from there, not from the start. */
export interface ClaimedBatch {
  readonly rows: readonly ClaimedRow[];
  /** `performance.now()` just before the claim was sent: the database's lease can only end later. */
  readonly claimedAt: number;
}

/**
 * Sees every row of a claimed batch to an outcome (see BatchOutcome), streaming its rows through the
 * relay's publish lanes (`streamRows`) and marking each chunk published right after its response,
 * then commits the rest (`commitBatch`). `handedOver` is called once no row is left to send. The
 * batch's deadline ends before its lease could run out under a row still being sent, or with the
 * drain's: either cuts the publishing short.
 */
export async function processBatch(
  settings: BatchSettings,
  deps: BatchDeps,
  { rows, claimedAt }: ClaimedBatch,
  handedOver: () => void,
): Promise<BatchReport> {
  // Counted from before the claim was sent, not from now: a batch claimed ahead has already spent part
  // of its lease waiting for the batch before it, and the database's lease can only end later than this.
  const leaseEndsAt = claimedAt + settings.leaseMs - settings.leaseMarginMs;
  const batch = Deadline.after(leaseEndsAt - performance.now(), deps.drain.deadline);
  const outcome = new BatchOutcome(settings);

  try {
    const marksFailedBefore = deps.marks.failures();
    await streamRows(rows, { batch, outcome, marksFailedBefore, settings, deps }, handedOver);
    return await commitBatch(
      outcome,
      { ...deps, relayId: settings.relayId },
      { claimed: rows.length, claimedAt },
    );
  } finally {
    batch.dispose();
  }
}
