import { MAX_VISIBILITY_SECONDS } from "@outbox/client";
import { commonSettings, type PlanCacheMode, setting } from "@outbox/shared";

/** The inbox's statements insert or delete by event id; handlers get Postgres's default planning. */
export const CONSUMER_PLAN_CACHE_MODE: PlanCacheMode = "auto";

/**
 * Everything the consumer daemon reads from its environment. The defaults are chosen to pass the
 * start-up budget check together (see `consumerTimeouts` in consumer-timeouts.ts and docs/consumer.md):
 * a long poll still open at SIGTERM (≤ 10 s) plus one SQS call (5 s) fits in the 20 s drain, and the
 * drain plus the 5 s shutdown overhead fits in the platform's 30 s stop timeout.
 */
export const consumerSettings = {
  ...commonSettings,
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
    default: "consumer",
    description: "This consumer's key in the inbox: consumers sharing a database each process an event once.",
  }),
  handlersModule: setting.string({
    env: "CONSUMER_HANDLERS_MODULE",
    default: "",
    defaultLabel: "*(the example handlers)*",
    description: "Module whose default export is the handler set (`defineHandlers`); a path or file URL.",
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
  inboxCleanupIntervalMs: setting.milliseconds({
    env: "CONSUMER_INBOX_CLEANUP_INTERVAL_MS",
    min: 1_000,
    max: 86_400_000,
    default: 600_000,
    description: "How often old inbox rows are deleted, in batches, in the background.",
  }),
};
