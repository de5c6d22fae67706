import type { S3Client } from "@aws-sdk/client-s3";
import type { SQSClient } from "@aws-sdk/client-sqs";
import type { HandlerSet } from "@outbox/client";
import { describeError } from "@outbox/client/internal";
import {
  brokenRules,
  type ConfigOf,
  type ConfigProblem,
  type Logger,
  numericOption,
  optionValues,
  positiveOption,
  refuseOptions,
  settingDefault,
} from "@outbox/shared";
import type { PostgresPool } from "kysely";
import type { Registry } from "prom-client";
import { consumerNameOf } from "./consumer-name.js";
import { ConsumerOptionsError } from "./errors.js";
import { receiveBoundMs } from "./loop/receive-bound.js";
import { type DeliveryMode, type MessageDelivery, messageDelivery } from "./message/delivery.js";
import { consumerRules, consumerSettings } from "./settings.js";

/**
 * Each numeric option and the setting of consumerSettings the daemon fills it from: its range, its
 * default and its documentation (docs/consumer.md) are that setting's.
 */
const tuningSettings = {
  pollers: "pollers",
  concurrency: "concurrency",
  waitTimeSeconds: "waitTimeSeconds",
  visibilityTimeoutSeconds: "visibilityTimeoutSeconds",
  handlerTimeoutMs: "handlerTimeoutMs",
  visibilityMarginMs: "visibilityMarginMs",
  /** Used by `drain()` without a deadline of its own; the daemon's drain deadline comes from runDaemon. */
  drainTimeoutMs: "drainTimeoutMs",
  deleteFlushMs: "deleteFlushMs",
  retryBaseSeconds: "retryBaseSeconds",
  retryMaxSeconds: "retryMaxSeconds",
  /** DB_STATEMENT_TIMEOUT_MS; the per-message statement timeout is never above it. */
  statementTimeoutMs: "dbStatementTimeoutMs",
  /** AWS_REQUEST_TIMEOUT_MS: a long poll may stay silent this much longer than its wait time. */
  requestTimeoutMs: "awsRequestTimeoutMs",
  /** Of each claim-checked message's deadline, the most its payload's fetch takes. */
  claimCheckFetchTimeoutMs: "claimCheckFetchTimeoutMs",
  /** The largest claim-checked payload read; a larger one is poison. */
  claimCheckMaxBytes: "claimCheckMaxBytes",
  /** The kill switch (KillSwitch): trip share, activity, window and pause. */
  killSwitchTripPercent: "killSwitchTripPercent",
  killSwitchActivityThreshold: "killSwitchActivityThreshold",
  killSwitchWindowMs: "killSwitchWindowMs",
  killSwitchRestartMs: "killSwitchRestartMs",
  killSwitchRestartMaxMs: "killSwitchRestartMaxMs",
} as const satisfies Record<string, keyof typeof consumerSettings>;

type TuningName = keyof typeof tuningSettings;

/** The numeric options, each as its setting (`tuningSettings`); any left out takes that setting's default. */
export type ConsumerTuning = { readonly [K in TuningName]?: number };

export interface ConsumerOptions<DB> extends ConsumerTuning {
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
   * another, in order, and a failing message holds its group (see FifoGroups).
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
  /**
   * Key of this consumer in the inbox (CONSUMER_NAME); default the queue's name (the last segment of
   * `queueUrl`), which differs between services and is shared by one service's replicas.
   */
  readonly name?: string;
  /**
   * Where claim-checked payloads are fetched from (CONSUMER_CLAIM_CHECK_BUCKET): only `bucket` is
   * read. Without it a claim-checked message is poison.
   */
  readonly claimCheck?: { readonly s3: S3Client; readonly bucket: string };
  /**
   * The longest one receive can take while its timeouts work (receiveBoundMs: the daemon's from
   * AWS_MAX_ATTEMPTS, AWS_CONNECTION_TIMEOUT_MS, AWS_REQUEST_TIMEOUT_MS and the wait); a receive
   * running longer makes `stalled()` say so. Default: from those settings' defaults, with
   * `waitTimeSeconds` and `requestTimeoutMs` as given.
   */
  readonly receiveBoundMs?: number;
  readonly log: Logger;
  /** Where the metrics are registered; a private registry by default. */
  readonly metrics?: Registry;
}

/** Every numeric option, given or defaulted. */
export type ConsumerNumbers = { readonly [K in TuningName]: number };

/** What createConsumer runs with: every option checked, or its setting's default. */
export interface ResolvedOptions {
  readonly numbers: ConsumerNumbers;
  readonly receiveBoundMs: number;
  readonly delivery: MessageDelivery;
  readonly name: string;
}

const tuningNames = Object.keys(tuningSettings) as TuningName[];

/** Each numeric option's setting, for optionValues. */
const optionSettings = Object.fromEntries(
  tuningNames.map((name) => [name, consumerSettings[tuningSettings[name]]]),
) as { readonly [K in TuningName]: (typeof consumerSettings)[(typeof tuningSettings)[K]] };

/** One numeric option as given, checked by its setting's rules (ConsumerOptionsError), or that setting's default. */
export function tuningOption(name: TuningName, value: number | undefined): number {
  return numericOption(
    consumerSettings[tuningSettings[name]],
    value,
    name,
    (message) => new ConsumerOptionsError(message),
  );
}

/**
 * The options a daemon passes for its configuration: each numeric option from its setting, so the
 * daemon and the library cannot map a variable to different options.
 */
export function tuningOf(config: ConfigOf<typeof consumerSettings>): ConsumerNumbers {
  const numbers = {} as Record<TuningName, number>;
  for (const name of tuningNames) numbers[name] = config[tuningSettings[name]];
  return numbers;
}

/** Refuses the options, every problem in one line, if there is any. */
const refuseAny = (problems: readonly ConfigProblem[]) =>
  refuseOptions(problems, (line) => new ConsumerOptionsError(line));

/**
 * The options as given, checked by their settings' rules, or those settings' defaults: a library
 * user is refused what the daemon would refuse in its CONSUMER_… form (each range, then
 * `consumerRules`; the stop budget is the deployment's, see consumerTimeouts).
 */
export function resolveOptions<DB>(options: ConsumerOptions<DB>): ResolvedOptions {
  const { values: numbers, problems } = optionValues(optionSettings, options);
  const receiveBound =
    options.receiveBoundMs ??
    receiveBoundMs({
      awsMaxAttempts: settingDefault(consumerSettings.awsMaxAttempts),
      awsConnectionTimeoutMs: settingDefault(consumerSettings.awsConnectionTimeoutMs),
      awsRequestTimeoutMs: numbers.requestTimeoutMs,
      waitTimeSeconds: numbers.waitTimeSeconds,
    });
  refuseAny([...problems, ...positiveOption("receiveBoundMs", receiveBound)]);
  const mode = options.delivery ?? settingDefault(consumerSettings.delivery);
  const topicArns = options.topicArns ?? settingDefault(consumerSettings.topicArns);
  refuseAny(brokenRules(consumerRules, { ...numbers, delivery: mode, topicArns }, (option) => option));
  let name: string;
  try {
    name = consumerNameOf(options.name, options.queueUrl);
  } catch (error) {
    throw new ConsumerOptionsError(describeError(error));
  }
  return { numbers, delivery: messageDelivery(mode, topicArns), name, receiveBoundMs: receiveBound };
}
