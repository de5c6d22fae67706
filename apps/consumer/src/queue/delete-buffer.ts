import { DeleteMessageBatchCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { MAX_BATCH_ENTRIES } from "@outbox/client/internal";
import { type BackoffPolicy, backoffMs, type Logger, sleep } from "@outbox/shared";
import type { Receipt } from "../message/receipt.js";
import type { ConsumerMetrics } from "../metrics.js";

interface Pending extends Receipt {
  attempts: number;
}

export interface DeleteBufferOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  /**
   * Wait before a partial batch is sent. While messages that could still fill it are being handled
   * (`inFlight`), it waits up to HOLD_FACTOR times as long: under load a batch then goes full.
   */
  readonly flushMs: number;
  /** Messages being handled now, each a delete to come. */
  readonly inFlight?: () => number;
  readonly log: Logger;
  readonly metrics: ConsumerMetrics;
}

const MAX_ATTEMPTS = 4;
const RETRY_BACKOFF: BackoffPolicy = { baseMs: 400, maxMs: 1_600 };
/** A partial batch waits at most this many flush periods while messages in flight could fill it. */
const HOLD_FACTOR = 4;

/**
 * Deletes committed messages with DeleteMessageBatch: 10 deletes cost one request instead of ten.
 * Entries a batch reports as failed are retried a few times; a delete finally lost is logged and
 * counted, and is safe: SQS redelivers the message and the inbox recognises the event.
 */
export class DeleteBuffer {
  readonly #options: DeleteBufferOptions;
  #pending: Pending[] = [];
  #timer: NodeJS.Timeout | undefined;
  /** Flush periods the current partial batch has waited. */
  #waited = 0;
  readonly #onTimer = () => this.#onFlushTimer();
  readonly #sending = new Set<Promise<void>>();
  #lost = 0;

  constructor(options: DeleteBufferOptions) {
    this.#options = options;
  }

  /** Deletes that were given up on. */
  get lost(): number {
    return this.#lost;
  }

  get pending(): number {
    return this.#pending.length;
  }

  add(entry: Receipt): void {
    this.#enqueue([{ messageId: entry.messageId, receiptHandle: entry.receiptHandle, attempts: 0 }]);
  }

  /** Sends everything buffered now and waits until every batch (retries included) has finished. */
  async flush(): Promise<void> {
    while (this.#pending.length > 0 || this.#sending.size > 0) {
      this.#sendAll();
      await Promise.all(this.#sending);
    }
  }

  #enqueue(entries: Pending[]): void {
    for (const entry of entries) this.#pending.push(entry);
    if (this.#pending.length >= MAX_BATCH_ENTRIES) this.#sendAll();
    else if (this.#timer === undefined && this.#pending.length > 0) {
      this.#waited = 0;
      this.#timer = setTimeout(this.#onTimer, this.#options.flushMs);
    }
  }

  #onFlushTimer(): void {
    this.#timer = undefined;
    this.#waited += 1;
    // One DeleteMessageBatch costs about as much for 1 entry as for 10: hold a partial batch a little
    // longer if the messages being handled could fill it. A late delete is harmless (the message is
    // committed and stays invisible); drain() flushes at once anyway.
    const fill = MAX_BATCH_ENTRIES - this.#pending.length;
    if (this.#waited < HOLD_FACTOR && (this.#options.inFlight?.() ?? 0) >= fill) {
      this.#timer = setTimeout(this.#onTimer, this.#options.flushMs);
      return;
    }
    this.#sendAll();
  }

  #sendAll(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0, MAX_BATCH_ENTRIES);
      const sending = this.#send(batch).finally(() => this.#sending.delete(sending));
      this.#sending.add(sending);
    }
  }

  async #send(batch: Pending[]): Promise<void> {
    const { sqs, queueUrl, log } = this.#options;
    for (const entry of batch) entry.attempts += 1;
    let retry: Pending[] = [];
    try {
      const output = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          // Ids only need to be unique within the batch.
          Entries: batch.map((entry, index) => ({ Id: String(index), ReceiptHandle: entry.receiptHandle })),
        }),
      );
      for (const failure of output.Failed ?? []) {
        const entry = batch[Number(failure.Id)];
        if (entry === undefined) continue;
        // A sender fault (e.g. an expired receipt handle) will not change on a retry.
        if (failure.SenderFault) this.#giveUp(entry, `${failure.Code}: ${failure.Message}`);
        else retry.push(entry);
      }
    } catch (error) {
      log.warn({ err: error, entries: batch.length }, "delete batch failed");
      retry = batch;
    }
    const again = retry.filter((entry) => {
      if (entry.attempts < MAX_ATTEMPTS) return true;
      this.#giveUp(entry, "retries exhausted");
      return false;
    });
    if (again.length > 0) {
      await sleep(backoffMs(again[0]?.attempts ?? 1, RETRY_BACKOFF));
      this.#enqueue(again);
    }
  }

  #giveUp(entry: Pending, reason: string): void {
    this.#lost += 1;
    this.#options.metrics.deleteFailures.inc();
    this.#options.log.warn(
      { messageId: entry.messageId, reason },
      "delete lost; the inbox will catch the redelivery",
    );
  }
}
