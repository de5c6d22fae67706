import type { Message } from "@aws-sdk/client-sqs";
import type { PoisonReason } from "../errors.js";
import type { Receipt } from "../message/receipt.js";
import type { SettleQueue } from "../queue/settle.js";

/**
 * The queue side of settling, with no queue: what the consumer decided for each message is kept by
 * its message id, for runHandlers to report beside the message's result. A delete or a release
 * needs nothing kept: the result says it all.
 */
export class SettleRecorder implements SettleQueue {
  readonly #poison = new Map<string, PoisonReason>();
  readonly #failures = new Map<string, unknown>();

  readonly sendToDeadLetterQueue = async (message: Message, reason: PoisonReason): Promise<void> => {
    this.#poison.set(message.MessageId ?? "", reason);
  };

  delete(): void {}

  async releaseForRetry(message: Receipt, _delaySeconds: number, cause: unknown): Promise<void> {
    this.#failures.set(message.messageId, cause);
  }

  async release(): Promise<void> {}

  /** Why the message went to the dead-letter queue. */
  poisonOf(messageId: string): PoisonReason | undefined {
    return this.#poison.get(messageId);
  }

  /** What failed the message (it would be retried). */
  failureOf(messageId: string): unknown {
    return this.#failures.get(messageId);
  }
}
