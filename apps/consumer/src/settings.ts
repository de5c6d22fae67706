import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { MAX_VISIBILITY_SECONDS } from "@outbox/client/internal";
import {
  awsSettings,
  type BudgetRule,
  brokenRules,
  budgetRules,
  type ConfigOf,
  type ConfigProblem,
  commonSettings,
  notAbove,
  type PlanCacheMode,
  type SettingRule,
  s3EndpointSettings,
  setting,
  type Timeout,
  type TimeoutRule,
} from "@outbox/shared";
import { handlersModuleUrl } from "./load-handlers.js";
import { deliveryProblem } from "./message/delivery.js";

/** The inbox's statements insert or delete by event id; handlers get Postgres's default planning. */
export const CONSUMER_PLAN_CACHE_MODE: PlanCacheMode = "auto";

/**
 * Everything the consumer daemon reads from its environment, and the one home of the consumer's
 * defaults and rules: createConsumer's options take their ranges and defaults from here
 * (consumer-options.ts), and the rules across settings follow below (`consumerRules` for every
 * consumer, `consumerTimeouts` for the daemon). The defaults are chosen to pass the start-up budget
 * check together (docs/consumer.md):
 * a long poll still open at SIGTERM (≤ 10 s) plus one SQS call (5 s) fits in the 20 s drain, and the
 * drain plus the 5 s shutdown overhead fits in the platform's 30 s stop timeout.
 */
export const consumerSettings = {
  ...commonSettings,
  ...awsSettings,
  queueUrl: setting.url({
    env: "CONSUMER_QUEUE_URL",
    description: "URL of the SQS queue to consume.",
  }),
  dlqUrl: setting.string({
    env: "CONSUMER_DLQ_URL",
    default: "",
    defaultLabel: "*(none)*",
    description:
      "Where poison messages go at once, with a `poison_reason` attribute; without it they wait for the queue's redrive.",
  }),
  delivery: setting.oneOf({
    env: "CONSUMER_DELIVERY",
    values: ["raw", "envelope"],
    default: "raw",
    description:
      "How the queue's SNS subscription delivers, as set on it (RawMessageDelivery): raw, as the CDK stack subscribes, takes the event's identity from the SQS message attributes and never unwraps a body; envelope unwraps SNS notifications from CONSUMER_TOPIC_ARNS only.",
  }),
  topicArns: setting.list({
    env: "CONSUMER_TOPIC_ARNS",
    default: [],
    defaultLabel: "*(none)*",
    description:
      "The SNS topics whose notifications are unwrapped; required with, and only read with, CONSUMER_DELIVERY=envelope. An envelope from any other topic is poison.",
  }),
  name: setting.string({
    env: "CONSUMER_NAME",
    default: "",
    defaultLabel: "*(the queue's name)*",
    description:
      "This consumer's key in the inbox: each name processes an event once. Unset, the last segment of CONSUMER_QUEUE_URL, so two services on one topic (a queue each) never skip each other's events; refused at start while the inbox holds rows of the former default `consumer` (docs/consumer.md).",
  }),
  handlersModule: setting.string({
    env: "CONSUMER_HANDLERS_MODULE",
    default: "",
    defaultLabel: "*(none: required)*",
    description:
      "Module whose default export is the handler set (`defineHandlers`); a path or file URL. Required when the handlers are not given in code (`runConsumer({ handlers })`, where it must be unset): without it the daemon refuses to start (exit 78).",
  }),
  pollers: setting.integer({
    env: "CONSUMER_POLLERS",
    min: 1,
    max: 64,
    default: 2,
    description: "Concurrent long polls: two keep a batch in flight while the previous one is handled.",
  }),
  concurrency: setting.integer({
    env: "CONSUMER_CONCURRENCY",
    min: 1,
    max: 500,
    unit: "messages",
    default: 20,
    description: "Messages handled at once (each holds one pooled connection); at most DB_POOL_MAX - 1.",
  }),
  waitTimeSeconds: setting.integer({
    env: "CONSUMER_WAIT_TIME_SECONDS",
    min: 0,
    max: 20,
    unit: "s",
    default: 10,
    description:
      "Long-poll wait. A poll open at SIGTERM is not aborted, so the drain must outlast it: hence 10, not 20.",
  }),
  visibilityTimeoutSeconds: setting.integer({
    env: "CONSUMER_VISIBILITY_TIMEOUT_SECONDS",
    min: 1,
    max: MAX_VISIBILITY_SECONDS,
    unit: "s",
    default: 30,
    description:
      "Lease taken on receive and on each heartbeat; short, so a crashed consumer's work returns soon.",
  }),
  handlerTimeoutMs: setting.milliseconds({
    env: "CONSUMER_HANDLER_TIMEOUT_MS",
    min: 100,
    max: MAX_VISIBILITY_SECONDS * 1_000,
    default: 60_000,
    description:
      "A message's deadline (handler + transaction); heartbeats extend the lease up to it, then the work is rolled back.",
  }),
  visibilityMarginMs: setting.milliseconds({
    env: "CONSUMER_VISIBILITY_MARGIN_MS",
    min: 0,
    max: 600_000,
    default: 5_000,
    description:
      "The lease always outlasts the deadline by this much, so a timed-out message is rolled back before SQS re-sends it.",
  }),
  drainTimeoutMs: setting.milliseconds({
    env: "CONSUMER_DRAIN_TIMEOUT_MS",
    min: 100,
    max: 120_000,
    default: 20_000,
    description:
      "Measured from SIGTERM: the open long poll returns and every received message finishes within it.",
  }),
  deleteFlushMs: setting.milliseconds({
    env: "CONSUMER_DELETE_FLUSH_MS",
    min: 0,
    max: 60_000,
    default: 5,
    description:
      "Wait before a partial DeleteMessageBatch is sent (a full one, 10 entries, goes at once); up to 4× as long while messages being handled could fill it.",
  }),
  retryBaseSeconds: setting.integer({
    env: "CONSUMER_RETRY_BASE_SECONDS",
    min: 0,
    max: MAX_VISIBILITY_SECONDS,
    unit: "s",
    default: 2,
    description: "Visibility after a handler's first failure; doubles with each ApproximateReceiveCount.",
  }),
  retryMaxSeconds: setting.integer({
    env: "CONSUMER_RETRY_MAX_SECONDS",
    min: 0,
    max: MAX_VISIBILITY_SECONDS,
    unit: "s",
    default: 300,
    description: "Cap of the retry backoff (SQS allows at most 12 h).",
  }),
  killSwitchTripPercent: setting.integer({
    env: "CONSUMER_KILL_SWITCH_TRIP_PERCENT",
    min: 0,
    max: 100,
    unit: "%",
    default: 50,
    description:
      "Share of failed messages over the window that pauses intake (the kill switch: a handler's dependency is down, and each failure would spend a receive); 0 turns it off. Poison and released messages are not counted.",
  }),
  killSwitchActivityThreshold: setting.integer({
    env: "CONSUMER_KILL_SWITCH_ACTIVITY_THRESHOLD",
    min: 1,
    max: 100_000,
    unit: "messages",
    default: 20,
    description:
      "Messages the window must have seen before the kill switch may trip: a few failures prove nothing.",
  }),
  killSwitchWindowMs: setting.milliseconds({
    env: "CONSUMER_KILL_SWITCH_WINDOW_MS",
    min: 1_000,
    max: 3_600_000,
    default: 60_000,
    description: "The recent window the kill switch measures the share of failed messages over.",
  }),
  killSwitchRestartMs: setting.milliseconds({
    env: "CONSUMER_KILL_SWITCH_RESTART_MS",
    min: 100,
    max: 3_600_000,
    default: 30_000,
    description:
      "How long intake pauses when the kill switch trips; then one message is tried, and if it fails too the pause doubles (with jitter), up to CONSUMER_KILL_SWITCH_RESTART_MAX_MS.",
  }),
  killSwitchRestartMaxMs: setting.milliseconds({
    env: "CONSUMER_KILL_SWITCH_RESTART_MAX_MS",
    min: 100,
    max: 3_600_000,
    default: 300_000,
    description: "Upper bound of the kill switch's pause.",
  }),
  inboxRetentionHours: setting.integer({
    env: "CONSUMER_INBOX_RETENTION_HOURS",
    min: 1,
    max: 87_600,
    unit: "h",
    default: 336,
    description:
      "Inbox rows older than this are deleted; must exceed the queue's retention (14 days covers any SQS queue).",
  }),
  queueRetentionHours: setting.integer({
    env: "CONSUMER_QUEUE_RETENTION_HOURS",
    min: 1,
    max: 336,
    unit: "h",
    default: 96,
    description: "The queue's MessageRetentionPeriod (SQS default 4 days): the oldest redelivery possible.",
  }),
  claimCheckBucket: setting.string({
    env: "CONSUMER_CLAIM_CHECK_BUCKET",
    default: "",
    defaultLabel: "*(none)*",
    description:
      "The S3 bucket of the claim check: a message with an `ExtendedPayloadSize` (or `SQSLargePayloadSize`) attribute has its payload fetched from it before the handler runs. Only this bucket is read; without it such a message is poison.",
  }),
  awsEndpointUrlS3: s3EndpointSettings.awsEndpointUrlS3,
  claimCheckFetchTimeoutMs: setting.milliseconds({
    env: "CONSUMER_CLAIM_CHECK_FETCH_TIMEOUT_MS",
    min: 100,
    max: MAX_VISIBILITY_SECONDS * 1_000,
    default: 10_000,
    description:
      "The most a claim-checked payload's fetch takes of its message's deadline; less than CONSUMER_HANDLER_TIMEOUT_MS, so the handler keeps the rest.",
  }),
  claimCheckMaxBytes: setting.integer({
    env: "CONSUMER_CLAIM_CHECK_MAX_BYTES",
    min: 1,
    max: 2_147_483_648,
    unit: "bytes",
    default: 8_388_608,
    description:
      "The largest claim-checked payload fetched (8 MiB, 32 times SNS's message limit). A larger one, declared or found, is poison and is never read past this; each message in flight may hold this much and its parsed form, so CONSUMER_CONCURRENCY times about four times this must fit the task's memory.",
  }),
  inboxCleanupIntervalMs: setting.milliseconds({
    env: "CONSUMER_INBOX_CLEANUP_INTERVAL_MS",
    min: 1_000,
    max: 86_400_000,
    default: 600_000,
    description: "How often old inbox rows are deleted, in batches, in the background.",
  }),
};

type ConsumerConfig = ConfigOf<typeof consumerSettings>;

/**
 * What `consumer dlq list` and `consumer redrive` read: SQS and the two queues, no database and no
 * handlers, so an operator runs them with the daemon's queue variables alone. Their `--help` lists these.
 */
export const dlqCommandSettings = {
  logLevel: commonSettings.logLevel,
  awsRegion: awsSettings.awsRegion,
  awsEndpointUrl: awsSettings.awsEndpointUrl,
  awsEndpointUrlSqs: awsSettings.awsEndpointUrlSqs,
  // `consumer redrive` looks for a claim-checked message's object before sending it back.
  awsEndpointUrlS3: s3EndpointSettings.awsEndpointUrlS3,
  awsConnectionTimeoutMs: awsSettings.awsConnectionTimeoutMs,
  awsRequestTimeoutMs: awsSettings.awsRequestTimeoutMs,
  awsMaxAttempts: awsSettings.awsMaxAttempts,
  queueUrl: consumerSettings.queueUrl,
  dlqUrl: consumerSettings.dlqUrl,
};

export type DlqCommandConfig = ConfigOf<typeof dlqCommandSettings>;

/**
 * How long `consumer dlq list` and `consumer redrive` hold what they received and did not move
 * (VisibilityTimeout on receive) before releasing it at once at the end: long enough that a message
 * is not received twice within one run; after a kill, what they held comes back on its own after it.
 */
export const DLQ_HOLD_SECONDS = 300;

/** The DLQ commands' rule: the daemon may run without a DLQ, they cannot, nor with the queue as its own DLQ. */
export function dlqCommandProblems(config: DlqCommandConfig): ConfigProblem[] {
  const env = consumerSettings.dlqUrl.env;
  if (config.dlqUrl === "") return [{ env, message: "is required: the queue the dead letters are in" }];
  if (!URL.canParse(config.dlqUrl)) return [{ env, message: `is not a URL (got "${config.dlqUrl}")` }];
  if (config.dlqUrl === config.queueUrl) {
    return [{ env, message: `must differ from ${consumerSettings.queueUrl.env}: it is the queue's DLQ` }];
  }
  return [];
}

/** What the rules every consumer obeys read, daemon and library alike. */
export type ConsumerRuleValues = Pick<
  ConsumerConfig,
  | "retryBaseSeconds"
  | "retryMaxSeconds"
  | "delivery"
  | "topicArns"
  | "killSwitchRestartMs"
  | "killSwitchRestartMaxMs"
>;

/**
 * The rules across settings that hold for every consumer: the daemon reports a break under the
 * variable's name (consumerTimeouts), createConsumer under the option's (ConsumerOptionsError).
 */
export const consumerRules: readonly SettingRule<ConsumerRuleValues>[] = [
  // A base above the cap would silently win from the first retry on.
  notAbove("retryBaseSeconds", "retryMaxSeconds"),
  notAbove("killSwitchRestartMs", "killSwitchRestartMaxMs"),
  {
    reads: ["topicArns", "delivery"],
    problem: (values) => deliveryProblem(values.delivery, values.topicArns),
  },
];

/** The daemon's own rule: the library is given a pool, and sizes its concurrency to it itself. */
const poolRule: SettingRule<ConsumerConfig> = {
  reads: ["concurrency", "dbPoolMax"],
  problem: ({ concurrency, dbPoolMax }, name) =>
    concurrency < dbPoolMax
      ? undefined
      : `${concurrency} must be less than ${name("dbPoolMax")} (${dbPoolMax}): each message holds a connection for its transaction, and the inbox cleanup needs one more`,
};

const envOf = (key: keyof ConsumerConfig): string => consumerSettings[key].env;

/**
 * The handlers module is a file in the consumer's image: a check of a task definition away from the
 * image (infra's synth-time check) leaves it out, and the daemon checks it at start-up. Required:
 * the example handlers are the demo's (packages/example-handlers), never a production default. Unless
 * the application's entry point gave its handlers to runConsumer: then it must be unset, so that
 * nobody deploys a module believing it runs.
 */
function handlersModuleProblems(modulePath: string, handlersInCode: boolean): ConfigProblem[] {
  const env = consumerSettings.handlersModule.env;
  if (handlersInCode) {
    return modulePath === ""
      ? []
      : [
          {
            env,
            message: "is set, but runConsumer was given its handlers: unset it, so one set of handlers runs",
          },
        ];
  }
  if (modulePath === "") {
    return [
      {
        env,
        message:
          'is required: the path of your module whose default export is defineHandlers(...) (docs/consumer.md, "Your own handlers")',
      },
    ];
  }
  if (!fs.existsSync(fileURLToPath(handlersModuleUrl(modulePath)))) {
    return [{ env, message: `no such file: ${modulePath}` }];
  }
  return [];
}

/** The daemon's timeouts in milliseconds, whatever unit their settings take, for its TimeoutRules. */
interface ConsumerTimeoutValues {
  readonly drainMs: number;
  readonly waitMs: number;
  readonly requestMs: number;
  readonly statementMs: number;
  readonly handlerMs: number;
  readonly marginMs: number;
  readonly visibilityMs: number;
  readonly queueRetentionMs: number;
  readonly inboxRetentionMs: number;
  /** Only with a claim-check bucket: without one nothing is fetched. */
  readonly claimCheckFetchMs?: number;
}

/** The daemon's timeout hierarchy (the common rules are runDaemon's). */
const consumerTimeoutRules: readonly TimeoutRule<ConsumerTimeoutValues>[] = [
  {
    // The drain is measured from SIGTERM and includes the long poll that is still open then.
    inner: ["waitMs", "requestMs"],
    outer: "drainMs",
    why: "a long poll open at the stop must return, and its messages be handled or released, within the drain",
  },
  {
    inner: ["statementMs"],
    outer: "handlerMs",
    why: "a statement must give up before the deadline of the message it belongs to",
  },
  {
    inner: ["marginMs", "requestMs"],
    outer: "visibilityMs",
    why: "each lease must outlast the safety margin plus one SQS call, or heartbeats cannot keep it ahead of the deadline",
  },
  {
    inner: ["queueRetentionMs"],
    outer: "inboxRetentionMs",
    why: "a redelivery arriving after its inbox row was deleted would be processed twice",
  },
  {
    inner: ["claimCheckFetchMs"],
    outer: "handlerMs",
    why: "a claim-checked payload is fetched within its message's deadline, and the handler needs some of it",
  },
];

/** The variable each timeout is set by. */
const timeoutVariable: Record<keyof ConsumerTimeoutValues, string> = {
  drainMs: envOf("drainTimeoutMs"),
  waitMs: envOf("waitTimeSeconds"),
  requestMs: envOf("awsRequestTimeoutMs"),
  statementMs: envOf("dbStatementTimeoutMs"),
  handlerMs: envOf("handlerTimeoutMs"),
  marginMs: envOf("visibilityMarginMs"),
  visibilityMs: envOf("visibilityTimeoutSeconds"),
  queueRetentionMs: envOf("queueRetentionHours"),
  inboxRetentionMs: envOf("inboxRetentionHours"),
  claimCheckFetchMs: envOf("claimCheckFetchTimeoutMs"),
};

const HOUR_MS = 3_600_000;

/**
 * The daemon's timeout hierarchy and its other rules, checked by runDaemon before anything starts
 * (together with the common rules: drain + shutdown overhead < STOP_TIMEOUT_MS, statement timeout <
 * drain). The budget is the deployment's: a library user sizes its own drain, so createConsumer
 * checks only `consumerRules`.
 */
export function consumerTimeouts(config: ConsumerConfig): {
  drain: Timeout;
  rules: BudgetRule[];
  problems: ConfigProblem[];
} {
  const timeouts: ConsumerTimeoutValues = {
    drainMs: config.drainTimeoutMs,
    waitMs: config.waitTimeSeconds * 1_000,
    requestMs: config.awsRequestTimeoutMs,
    statementMs: config.dbStatementTimeoutMs,
    handlerMs: config.handlerTimeoutMs,
    marginMs: config.visibilityMarginMs,
    visibilityMs: config.visibilityTimeoutSeconds * 1_000,
    queueRetentionMs: config.queueRetentionHours * HOUR_MS,
    inboxRetentionMs: config.inboxRetentionHours * HOUR_MS,
    ...(config.claimCheckBucket === "" ? {} : { claimCheckFetchMs: config.claimCheckFetchTimeoutMs }),
  };
  // Reported by runDaemon with every other problem (unparsable variables, broken rules), exit 78.
  return {
    drain: { env: envOf("drainTimeoutMs"), ms: config.drainTimeoutMs },
    rules: budgetRules(consumerTimeoutRules, timeouts, (key) => timeoutVariable[key]),
    problems: brokenRules([poolRule, ...consumerRules], config, envOf),
  };
}

/**
 * What runConsumer checks at start-up: consumerTimeouts, and the handlers module in its image, or
 * its absence when the application gave its handlers in code.
 */
export function consumerStartChecks(
  config: ConsumerConfig,
  handlersInCode: boolean,
): ReturnType<typeof consumerTimeouts> {
  const checks = consumerTimeouts(config);
  return {
    ...checks,
    problems: [...checks.problems, ...handlersModuleProblems(config.handlersModule, handlersInCode)],
  };
}
