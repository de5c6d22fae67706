import { type ConfigOf, commonSettings, setting } from "@outbox/shared";

/**
 * Everything the relay daemon reads from the environment: the common settings plus its own.
 * Exported as one spec so the docs table (docs/relay.md) is generated from the same objects that parse.
 */
export const relaySettings = {
  ...commonSettings,
  batchSize: setting.integer({
    env: "RELAY_BATCH_SIZE",
    min: 1,
    max: 1_000,
    unit: "rows",
    default: 100,
    description: "Rows claimed per batch; a full batch is followed by the next claim at once.",
  }),
  leaseMs: setting.milliseconds({
    env: "RELAY_LEASE_MS",
    min: 1_000,
    max: 3_600_000,
    default: 60_000,
    description:
      "How long a claim holds its rows; a crashed relay's rows return after it. Must exceed the drain timeout.",
  }),
  publishConcurrency: setting.integer({
    env: "RELAY_PUBLISH_CONCURRENCY",
    min: 1,
    max: 100,
    unit: "requests",
    default: 8,
    description: "PublishBatch requests in flight at once.",
  }),
  pipelineDepth: setting.integer({
    env: "RELAY_PIPELINE_DEPTH",
    min: 1,
    max: 8,
    unit: "batches",
    default: 2,
    description:
      "Batches held at once: one publishing, the others claimed ahead while it publishes and marks; 1 claims only after the batch before is done. Rows claimed ahead wait under their lease and are released unsent on stop.",
  }),
  topicArns: setting.map({
    env: "RELAY_TOPIC_ARNS",
    default: {},
    defaultLabel: "*(empty)*",
    description: "`logical=arn,…`: maps the outbox `topic` column to an SNS topic ARN.",
  }),
  defaultTopicArn: setting.string({
    env: "RELAY_DEFAULT_TOPIC_ARN",
    default: "",
    defaultLabel: "*(none)*",
    description:
      "Topic ARN for rows whose topic is not in RELAY_TOPIC_ARNS; without it such rows are dead at once. With neither set the relay refuses to start (exit 78), and so it does with a value that is not an SNS topic ARN.",
  }),
  maxAttempts: setting.integer({
    env: "RELAY_MAX_ATTEMPTS",
    min: 1,
    max: 1_000,
    unit: "attempts",
    default: 10,
    description:
      "Publishes of a row that SNS refuses (its own entry listed as Failed) before it is marked dead; whole-request failures do not count.",
  }),
  backoffBaseMs: setting.milliseconds({
    env: "RELAY_BACKOFF_BASE_MS",
    min: 1,
    max: 600_000,
    default: 1_000,
    description: "Delay before the first retry of a failed row; doubles per attempt, with jitter.",
  }),
  backoffMaxMs: setting.milliseconds({
    env: "RELAY_BACKOFF_MAX_MS",
    min: 1,
    max: 86_400_000,
    default: 300_000,
    description: "Upper bound of the retry delay.",
  }),
  outageBackoffMaxMs: setting.milliseconds({
    env: "RELAY_OUTAGE_BACKOFF_MAX_MS",
    min: 1,
    max: 600_000,
    default: 30_000,
    description:
      "Upper bound of the wait of a topic whose PublishBatch requests fail as a whole (SNS down, throttling, timeouts): how late a recovered SNS is noticed. Starts at RELAY_BACKOFF_BASE_MS, doubles per failure, with jitter; spends no attempts.",
  }),
  pollIntervalMs: setting.milliseconds({
    env: "RELAY_POLL_INTERVAL_MS",
    min: 10,
    max: 600_000,
    default: 1_000,
    description: "Fallback poll when no insert notification arrives (missed NOTIFY, retries coming due).",
  }),
  retentionMs: setting.milliseconds({
    env: "RELAY_RETENTION_MS",
    min: 0,
    max: 31_536_000_000,
    default: 604_800_000,
    description: "Published rows older than this are deleted in the background; 0 keeps them forever.",
  }),
  retentionIntervalMs: setting.milliseconds({
    env: "RELAY_RETENTION_INTERVAL_MS",
    min: 1_000,
    max: 86_400_000,
    default: 60_000,
    description: "Pause between two retention sweeps.",
  }),
  drainTimeoutMs: setting.milliseconds({
    env: "RELAY_DRAIN_TIMEOUT_MS",
    min: 100,
    max: 120_000,
    default: 20_000,
    description:
      "On stop, how long the batch in flight may keep publishing and marking; then the rest is released.",
  }),
};

export type RelayConfig = ConfigOf<typeof relaySettings>;
