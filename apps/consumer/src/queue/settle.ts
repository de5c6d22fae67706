import type { Message, SQSClient } from "@aws-sdk/client-sqs";
import type { Logger } from "@outbox/shared";
import type { PoisonReason } from "../errors.js";
import { type Receipt, receiptOf, receiveCountOf } from "../message/receipt.js";
import type { ConsumerMetrics, MessageResult } from "../metrics.js";
import { sendToDeadLetterQueue } from "./dead-letter-queue.js";
import type { DeleteBuffer } from "./delete-buffer.js";
import { releaseForRetry, releaseMessages, retryDelaySeconds } from "./release.js";

/**
 * The queue side of settling a message: SQS in the consumer (sqsSettleQueue), a recording stand-in
 * in runHandlers (testing/) and the pipeline's tests.
 */
export interface SettleQueue {
  /** Buffered: deletes go out in batches (DeleteBuffer). */
  delete(message: Receipt): void;
  /**
   * Releases one failed message after its retry delay. `cause` is what failed it (a handler's error,
   * say): SQS has no use for it, a stand-in that reports each message's end does.
   */
  releaseForRetry(message: Receipt, delaySeconds: number, cause: unknown): Promise<void>;
  /** Releases messages: visible again after `visibilitySeconds`. */
  release(messages: readonly Receipt[], visibilitySeconds: number): Promise<void>;
  /** Copies a poison message to the DLQ; undefined without one. */
  readonly sendToDeadLetterQueue: ((message: Message, reason: PoisonReason) => Promise<void>) | undefined;
}

export function sqsSettleQueue(options: {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly dlqUrl: string | undefined;
  readonly deletes: DeleteBuffer;
}): SettleQueue {
  const { sqs, queueUrl, dlqUrl, deletes } = options;
  return {
    delete: (message) => deletes.add(message),
    releaseForRetry: (message, delaySeconds) => releaseForRetry(sqs, queueUrl, message, delaySeconds),
    release: async (messages, visibilitySeconds) => {
      await releaseMessages(sqs, queueUrl, messages, visibilitySeconds);
    },
    sendToDeadLetterQueue: dlqUrl
      ? (message, reason) => sendToDeadLetterQueue(sqs, dlqUrl, message, reason)
      : undefined,
  };
}

export interface SettleOptions {
  readonly queue: SettleQueue;
  readonly retryBaseSeconds: number;
  readonly retryMaxSeconds: number;
  /**
   * The shortest retry delay now (the kill switch's, after a failed trial): the message tried stays
   * away for the next pause, so the next trial tries another one instead of spending its receives.
   */
  readonly retryFloorSeconds?: () => number;
  readonly log: Logger;
  readonly metrics: ConsumerMetrics;
}

/**
 * How a message leaves our hands: deleted after its commit, retried later, released untouched, or
 * quarantined as poison. A failing SQS call here never fails the message twice: the lease running
 * out returns it instead.
 */
export class MessageSettler {
  readonly #options: SettleOptions;

  constructor(options: SettleOptions) {
    this.#options = options;
  }

  /** Only after the commit: deleting first would lose the event if the commit then failed. */
  delete(message: Receipt): void {
    this.#options.queue.delete(message);
  }

  retryDelayOf(message: Message): number {
    const { retryBaseSeconds, retryMaxSeconds, retryFloorSeconds } = this.#options;
    const scheduled = retryDelaySeconds(receiveCountOf(message), retryBaseSeconds, retryMaxSeconds);
    return Math.max(scheduled, retryFloorSeconds?.() ?? 0);
  }

  async quarantine(message: Message, reason: PoisonReason): Promise<MessageResult> {
    const { queue, log, metrics } = this.#options;
    metrics.poison.inc({ kind: reason.kind });
    log.warn({ messageId: message.MessageId, reason: reason.toString() }, "poison message");
    if (queue.sendToDeadLetterQueue === undefined) return this.retry(message, reason);
    try {
      await queue.sendToDeadLetterQueue(message, reason);
    } catch (error) {
      log.warn(
        { err: error, messageId: message.MessageId },
        "poison message not moved to the DLQ; retrying later",
      );
      return this.retry(message, error);
    }
    queue.delete(receiptOf(message));
    return "poison";
  }

  /** Releases the message for a later attempt; the redrive policy ends it in the DLQ. */
  async retry(message: Message, cause: unknown): Promise<MessageResult> {
    const { queue, log } = this.#options;
    const receiveCount = receiveCountOf(message);
    const delaySeconds = this.retryDelayOf(message);
    log.warn(
      { messageId: message.MessageId, receiveCount, retryInSeconds: delaySeconds, err: cause },
      "message failed; retrying later",
    );
    try {
      await queue.releaseForRetry(receiptOf(message), delaySeconds, cause);
    } catch (error) {
      // The lease runs out instead: the retry only comes later than planned.
      log.warn({ err: error, messageId: message.MessageId }, "retry delay not set");
    }
    return "failed";
  }

  /** Releases a message the drain has no time left for: another consumer takes it at once. */
  async release(message: Message): Promise<MessageResult> {
    try {
      await this.#options.queue.release([receiptOf(message)], 0);
    } catch (error) {
      this.#options.log.warn(
        { err: error, messageId: message.MessageId },
        "release failed; the lease will run out",
      );
    }
    return "released";
  }

  /** Releases messages never started, visible again after `visibilitySeconds`. */
  async releaseUntouched(messages: readonly Message[], visibilitySeconds: number): Promise<void> {
    try {
      await this.#options.queue.release(messages.map(receiptOf), visibilitySeconds);
    } catch (error) {
      this.#options.log.warn(
        { err: error, messages: messages.length },
        "release failed; the lease will run out",
      );
    }
  }
}
