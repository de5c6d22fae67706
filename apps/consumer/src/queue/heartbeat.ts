import { performance } from "node:perf_hooks";
import { ChangeMessageVisibilityBatchCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { Deadline } from "@outbox/client";
import { MAX_BATCH_ENTRIES } from "@outbox/client/internal";
import type { Logger } from "@outbox/shared";
import type { Receipt } from "../message/receipt.js";
import type { ConsumerMetrics } from "../metrics.js";

/** A message we hold: its lease (visibility) must stay ahead of its deadline by the safety margin. */
export interface Lease extends Receipt {
  readonly deadline: Deadline;
  /** `performance.now()` at which SQS may hand the message to someone else. */
  expiresAt: number;
}

export interface HeartbeatOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly visibilityTimeoutSeconds: number;
  readonly marginMs: number;
  readonly log: Logger;
  readonly metrics: ConsumerMetrics;
}

/**
 * Extends the leases of slow messages so no second consumer receives one while we still work on
 * it. One timer sweeps every lease (cheaper than a timer per message); a lease with less than half
 * the visibility timeout left is renewed, in batches of 10, but never past deadline + margin: the
 * deadline is the cap, after which the work is rolled back and the message released.
 */
export class VisibilityHeartbeat {
  readonly #options: HeartbeatOptions;
  readonly #leases = new Set<Lease>();
  readonly #timer: NodeJS.Timeout;
  readonly #renewing = new Set<Promise<void>>();
  /** Leases with a renewal on the wire: the next sweep must not ask again. */
  readonly #awaitingAnswer = new Set<Lease>();

  constructor(options: HeartbeatOptions) {
    this.#options = options;
    const timeoutMs = options.visibilityTimeoutSeconds * 1_000;
    // Four sweeps per half lease: a renewal is never more than 1/8 of the lease late.
    this.#timer = setInterval(() => this.#sweep(), Math.max(50, Math.min(1_000, timeoutMs / 8)));
    this.#timer.unref();
  }

  track(lease: Lease): void {
    this.#leases.add(lease);
  }

  untrack(lease: Lease): void {
    this.#leases.delete(lease);
  }

  /** Stops sweeping and waits for renewals already sent. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await Promise.all(this.#renewing);
  }

  #sweep(): void {
    const now = performance.now();
    const { visibilityTimeoutSeconds, marginMs } = this.#options;
    const halfLeaseMs = (visibilityTimeoutSeconds * 1_000) / 2;
    const due: { lease: Lease; seconds: number }[] = [];
    for (const lease of this.#leases) {
      const needed = lease.deadline.expiresAt + marginMs - lease.expiresAt;
      if (needed <= 0 || lease.expiresAt - now > halfLeaseMs || lease.deadline.aborted) continue;
      if (this.#awaitingAnswer.has(lease)) continue;
      const wantedMs = Math.min(visibilityTimeoutSeconds * 1_000, lease.deadline.expiresAt + marginMs - now);
      due.push({ lease, seconds: Math.ceil(wantedMs / 1_000) });
    }
    for (let start = 0; start < due.length; start += MAX_BATCH_ENTRIES) {
      const renewing = this.#renew(due.slice(start, start + MAX_BATCH_ENTRIES), now).finally(() =>
        this.#renewing.delete(renewing),
      );
      this.#renewing.add(renewing);
    }
  }

  async #renew(batch: { lease: Lease; seconds: number }[], sentAt: number): Promise<void> {
    const { sqs, queueUrl, log, metrics } = this.#options;
    for (const { lease } of batch) this.#awaitingAnswer.add(lease);
    try {
      const output = await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map(({ lease, seconds }, index) => ({
            Id: String(index),
            ReceiptHandle: lease.receiptHandle,
            VisibilityTimeout: seconds,
          })),
        }),
      );
      for (const success of output.Successful ?? []) {
        const renewed = batch[Number(success.Id)];
        if (renewed === undefined) continue;
        // Counted from when we asked: the new lease started no earlier than that.
        renewed.lease.expiresAt = sentAt + renewed.seconds * 1_000;
        metrics.visibilityExtensions.inc();
      }
      for (const failure of output.Failed ?? []) {
        log.warn(
          { messageId: batch[Number(failure.Id)]?.lease.messageId, code: failure.Code },
          "lease not extended",
        );
      }
    } catch (error) {
      // The next sweep tries again while the lease lasts.
      log.warn({ err: error, messages: batch.length }, "lease extension failed");
    } finally {
      for (const { lease } of batch) this.#awaitingAnswer.delete(lease);
    }
  }
}
