import type { Message, SQSClient } from "@aws-sdk/client-sqs";
import type { Logger } from "@outbox/shared";
import type { MessageFate, MessageFates } from "../message/fate.js";
import { receiptOf } from "../message/receipt.js";
import { sendToDeadLetterQueue } from "./dead-letter-queue.js";
import type { DeleteBuffer } from "./delete-buffer.js";
import { releaseForRetry, releaseMessages } from "./release.js";

export interface MessageQueueOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly dlqUrl: string | undefined;
  readonly deletes: DeleteBuffer;
  /** Decides again for a poison message the DLQ refused: it is retried. */
  readonly fates: MessageFates;
  readonly log: Logger;
}

/**
 * The SQS side of a message's fate: how it leaves our hands. A failing SQS call here never fails the
 * message twice: the lease running out returns it instead.
 */
export class MessageQueue {
  readonly #options: MessageQueueOptions;

  constructor(options: MessageQueueOptions) {
    this.#options = options;
  }

  /** Carries out `fate`; resolves the fate the message had in the end (poison the DLQ refused is retried). */
  async settle(message: Message, fate: MessageFate): Promise<MessageFate> {
    switch (fate.result) {
      case "processed":
      case "duplicate":
        // Only ever after the commit: deleting first would lose the event if the commit then failed.
        this.#options.deletes.add(receiptOf(message));
        return fate;
      case "poison":
        return this.#deadLetter(message, fate);
      case "failed":
        await this.#retryLater(message, fate.retryInSeconds);
        return fate;
      case "released":
        await this.releaseUntouched([message], 0);
        return fate;
    }
  }

  /** Releases messages never started, visible again after `visibilitySeconds`. */
  async releaseUntouched(messages: readonly Message[], visibilitySeconds: number): Promise<void> {
    const { sqs, queueUrl, log } = this.#options;
    try {
      await releaseMessages(sqs, queueUrl, messages.map(receiptOf), visibilitySeconds);
    } catch (error) {
      const which =
        messages.length === 1 ? { messageId: messages[0]?.MessageId } : { messages: messages.length };
      log.warn({ err: error, ...which }, "release failed; the lease will run out");
    }
  }

  /** Copies the message to the DLQ, then deletes it; a crash in between leaves a copy, never a loss. */
  async #deadLetter(message: Message, fate: MessageFate & { result: "poison" }): Promise<MessageFate> {
    const { sqs, dlqUrl, log } = this.#options;
    if (dlqUrl === undefined) throw new Error("a poison fate without a DLQ to send it to");
    try {
      await sendToDeadLetterQueue(sqs, dlqUrl, message, fate.reason);
    } catch (error) {
      log.warn(
        { err: error, messageId: message.MessageId },
        "poison message not moved to the DLQ; retrying later",
      );
      return this.settle(message, this.#options.fates.retry(message, error));
    }
    this.#options.deletes.add(receiptOf(message));
    return fate;
  }

  async #retryLater(message: Message, delaySeconds: number): Promise<void> {
    try {
      await releaseForRetry(this.#options.sqs, this.#options.queueUrl, receiptOf(message), delaySeconds);
    } catch (error) {
      // The lease runs out instead: the retry only comes later than planned.
      this.#options.log.warn({ err: error, messageId: message.MessageId }, "retry delay not set");
    }
  }
}
