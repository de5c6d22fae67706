import type { Message } from "@aws-sdk/client-sqs";
import { type Context, context } from "@opentelemetry/api";
import { isPoisonMessageError } from "@outbox/client";
import { describeError } from "@outbox/client/internal";
import { backoffMs, type Logger, PostgresUnansweredError, TransactionEscapedError } from "@outbox/shared";
import { DrainExpiredError, PoisonReason } from "../errors.js";
import type { DatabaseOutage } from "../loop/database-outage.js";
import type { ConsumerMetrics } from "../metrics.js";
import { receiveCountOf } from "./receipt.js";

/**
 * What becomes of a received message: decided here, once, by the message's handling, and carried
 * out on SQS by MessageQueue.settle (runHandlers reports it instead). `result` is the metric label.
 */
export type MessageFate =
  /** Committed with its inbox row, or caught by it as a duplicate: deleted. */
  | { readonly result: "processed" | "duplicate" }
  /** Rolled back: visible again after `retryInSeconds`; the redrive policy ends it in the DLQ. */
  | { readonly result: "failed"; readonly cause: unknown; readonly retryInSeconds: number }
  /** Never retried: copied to the DLQ with its reason, then deleted. */
  | { readonly result: "poison"; readonly reason: PoisonReason }
  /** Handed back at once, no attempt spent: the drain has no time for it, or the database is down. */
  | { readonly result: "released" };

export const RELEASED: MessageFate = { result: "released" };

/**
 * Retry delay after the `receiveCount`-th failed delivery: base · 2^(count-1), capped. SQS's redrive
 * policy moves the message to the DLQ once maxReceiveCount deliveries have failed. No jitter: this
 * is the schedule docs/consumer.md gives for sizing maxReceiveCount.
 */
export function retryDelaySeconds(receiveCount: number, baseSeconds: number, maxSeconds: number): number {
  const policy = { baseMs: baseSeconds * 1_000, maxMs: maxSeconds * 1_000 };
  return backoffMs(receiveCount, policy, { jitter: "none" }) / 1_000;
}

/** Whether a thrown value passes a check: a handler may throw anything, even a Proxy whose prototype cannot be read. */
function is(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    return false;
  }
}

/**
 * The drain ran out while the message was in flight: released at once, not retried later. The
 * drain's DrainExpiredError itself, or the cause of the PostgresUnansweredError it cut a statement with.
 */
export function drainExpired(error: unknown): boolean {
  return is(
    () =>
      error instanceof DrainExpiredError ||
      (error instanceof PostgresUnansweredError && error.cause instanceof DrainExpiredError),
  );
}

/** The handler ended the transaction it was given (TransactionEscapedError). */
export function leftItsTransaction(error: unknown): boolean {
  return is(() => error instanceof TransactionEscapedError);
}

export interface FateRules {
  readonly retryBaseSeconds: number;
  readonly retryMaxSeconds: number;
  /**
   * The shortest retry delay now (the kill switch's, after a failed trial): the message tried stays
   * away for the next pause, so the next trial tries another one instead of spending its receives.
   */
  readonly retryFloorSeconds?: () => number;
  /** Whether poison can go to a DLQ; without one it is retried, and the redrive policy ends it. */
  readonly deadLetterQueue: boolean;
  /** Whether the database is unreachable: a failure it explains spends no attempt. */
  readonly database: Pick<DatabaseOutage, "explains">;
  readonly log: Logger;
  readonly metrics: ConsumerMetrics;
}

/** The rules that turn what went wrong with a message into its fate; the log lines say which. */
export class MessageFates {
  readonly #rules: FateRules;

  constructor(rules: FateRules) {
    this.#rules = rules;
  }

  /** A message we cannot or must not process: to the DLQ, or, without one, retried. */
  quarantine(message: Message, reason: PoisonReason): MessageFate {
    const { log, metrics } = this.#rules;
    metrics.poison.inc({ kind: reason.kind });
    log.warn({ messageId: message.MessageId, reason: reason.toString() }, "poison message");
    return this.#rules.deadLetterQueue ? { result: "poison", reason } : this.retry(message, reason);
  }

  /** Another attempt, after the retry delay of this receive count. */
  retry(message: Message, cause: unknown): MessageFate {
    const receiveCount = receiveCountOf(message);
    const retryInSeconds = this.#retryDelayOf(receiveCount);
    this.#rules.log.warn(
      { messageId: message.MessageId, receiveCount, retryInSeconds, err: cause },
      "message failed; retrying later",
    );
    return { result: "failed", cause, retryInSeconds };
  }

  /**
   * A message whose handling threw, by what the error means. A handler that left its transaction
   * goes to the DLQ at once, like poison, though the message is not to blame: each retry would run
   * the broken handler again and commit its later writes once more, outside any inbox row. Redriven
   * once the handler is fixed (docs/consumer.md). Neither a stop nor an unreachable database is the
   * message's fault: released at once. The retry's log line runs in `trace`, the message's span.
   */
  async afterFailure(message: Message, error: unknown, trace: Context): Promise<MessageFate> {
    if (is(() => isPoisonMessageError(error))) {
      return this.quarantine(message, new PoisonReason("rejected_by_handler", describeError(error)));
    }
    if (leftItsTransaction(error)) {
      this.#rules.log.error(
        { messageId: message.MessageId, err: error },
        "handler left its inbox transaction",
      );
      return this.quarantine(message, new PoisonReason("handler_left_transaction", describeError(error)));
    }
    if (drainExpired(error) || (await this.#rules.database.explains(error))) return RELEASED;
    return context.with(trace, () => this.retry(message, error));
  }

  #retryDelayOf(receiveCount: number): number {
    const { retryBaseSeconds, retryMaxSeconds, retryFloorSeconds } = this.#rules;
    const scheduled = retryDelaySeconds(receiveCount, retryBaseSeconds, retryMaxSeconds);
    return Math.max(scheduled, retryFloorSeconds?.() ?? 0);
  }
}
