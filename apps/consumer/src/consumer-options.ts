import type { SQSClient } from "@aws-sdk/client-sqs";
import type { HandlerSet } from "@outbox/client";
import { type Logger, numericOption, type Setting } from "@outbox/shared";
import type { PostgresPool } from "kysely";
import type { Registry } from "prom-client";
import { ConsumerOptionsError } from "./errors.js";
import {
  type DeliveryMode,
  deliveryProblem,
  type MessageDelivery,
  messageDelivery,
} from "./message-delivery.js";
import { consumerSettings } from "./settings.js";

export interface ConsumerOptions<DB> {
  readonly handlers: HandlerSet<DB>;
  /**
   * The pg pool (`DatabaseHandle.pool`) of a database with the `inbox` table (migrateToLatest).
   * Handlers get a Kysely<DB> over their message's transaction.
   */
  readonly pool: PostgresPool;
  readonly sqs: SQSClient;
  /**
   * For the long polls: a client whose own request timeout already covers one (waitTimeSeconds plus
   * the usual request timeout). Receives then go out without per-call options, which a client made
   * with `cacheMiddleware` (createSqsClient) needs to skip composing its middleware on every call.
   * Without it, receives use `sqs` and give their longer timeout per call.
   */
  readonly receiveSqs?: SQSClient;
  /**
   * A URL ending in `.fifo` is a FIFO queue: each message group's messages are handled one after
   * another, in order, and a failing message holds its group (see GroupLanes).
   */
  readonly queueUrl: string;
  /** Poison goes here at once; without it, poison waits for the queue's redrive policy. */
  readonly dlqUrl?: string;
  /**
   * How the queue's SNS subscription delivers (CONSUMER_DELIVERY), default "raw": the event's
   * identity comes from the SQS message attributes and a body is never unwrapped. "envelope" unwraps
   * SNS notifications of `topicArns` only.
   */
  readonly delivery?: DeliveryMode;
  /** CONSUMER_TOPIC_ARNS: required with, and only taken with, `delivery: "envelope"`. */
  readonly topicArns?: readonly string[];
  /** Key of this consumer in the inbox. Default "consumer". */
  readonly name?: string;
  readonly log: Logger;
  /** Where the metrics are registered; a private registry by default. */
  readonly metrics?: Registry;
  readonly pollers?: number;
  readonly concurrency?: number;
  readonly waitTimeSeconds?: number;
  readonly visibilityTimeoutSeconds?: number;
  readonly handlerTimeoutMs?: number;
  readonly visibilityMarginMs?: number;
  /** Used by `drain()` without a signal of its own; the daemon's drain deadline comes from runDaemon. */
  readonly drainTimeoutMs?: number;
  readonly deleteFlushMs?: number;
  readonly retryBaseSeconds?: number;
  readonly retryMaxSeconds?: number;
  /** DB_STATEMENT_TIMEOUT_MS; the per-message statement timeout is never above it. */
  readonly statementTimeoutMs?: number;
  /** AWS_REQUEST_TIMEOUT_MS: a long poll may stay silent this much longer than its wait time. */
  readonly requestTimeoutMs?: number;
}

/** Each numeric option and the CONSUMER_… (or DB_/AWS_) setting the daemon fills it from. */
const optionSettings = {
  pollers: consumerSettings.pollers,
  concurrency: consumerSettings.concurrency,
  waitTimeSeconds: consumerSettings.waitTimeSeconds,
  visibilityTimeoutSeconds: consumerSettings.visibilityTimeoutSeconds,
  handlerTimeoutMs: consumerSettings.handlerTimeoutMs,
  visibilityMarginMs: consumerSettings.visibilityMarginMs,
  drainTimeoutMs: consumerSettings.drainTimeoutMs,
  deleteFlushMs: consumerSettings.deleteFlushMs,
  retryBaseSeconds: consumerSettings.retryBaseSeconds,
  retryMaxSeconds: consumerSettings.retryMaxSeconds,
  statementTimeoutMs: consumerSettings.dbStatementTimeoutMs,
  requestTimeoutMs: consumerSettings.awsRequestTimeoutMs,
} satisfies { [K in keyof ConsumerOptions<unknown>]?: Setting<number> };

/** Every numeric option, given or defaulted. */
export type ConsumerNumbers = { readonly [K in keyof typeof optionSettings]: number };

/**
 * Each numeric option as given, checked by its setting's rules, or that setting's default: a library
 * user is refused what the daemon would refuse in its CONSUMER_… form.
 */
export function consumerNumbers<DB>(options: ConsumerOptions<DB>): ConsumerNumbers {
  const numbers = {} as Record<keyof typeof optionSettings, number>;
  for (const name of Object.keys(optionSettings) as (keyof typeof optionSettings)[]) {
    numbers[name] = numericOption(
      optionSettings[name],
      options[name],
      name,
      (message) => new ConsumerOptionsError(message),
    );
  }
  if (numbers.retryBaseSeconds > numbers.retryMaxSeconds) {
    throw new ConsumerOptionsError(
      `retryBaseSeconds (${numbers.retryBaseSeconds}) must not exceed retryMaxSeconds (${numbers.retryMaxSeconds})`,
    );
  }
  return numbers;
}

/** The delivery options, or the setting's defaults; refused as the daemon refuses them. */
export function consumerDelivery<DB>(options: ConsumerOptions<DB>): MessageDelivery {
  const mode = options.delivery ?? consumerSettings.delivery.default ?? "raw";
  const topicArns = options.topicArns ?? [];
  const problem = deliveryProblem(mode, topicArns);
  if (problem !== undefined) throw new ConsumerOptionsError(`topicArns ${problem}`);
  return messageDelivery(mode, topicArns);
}
