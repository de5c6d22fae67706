import {
  awsSettings,
  brokenRules,
  budgetRules,
  type ConfigOf,
  commonSettings,
  type DaemonTimeouts,
  databaseSettings,
  notAbove,
  type SettingRule,
  s3EndpointSettings,
  setting,
  type TimeoutRule,
} from "@outbox/shared";
import { topicRoutingProblems } from "./topic-routing.js";

/**
 * Everything the relay daemon reads from the environment: the common settings plus its own.
 * Exported as one spec so the docs table (docs/relay.md) is generated from the same objects that parse.
 */
export const relaySettings = {
  ...commonSettings,
  ...awsSettings,
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
  databaseSessionUrl: setting.url({
    env: "DATABASE_SESSION_URL",
    default: "",
    defaultLabel: "*(DATABASE_URL)*",
    secret: true,
    description:
      "Where what needs a Postgres session of its own connects when DATABASE_URL leads through a transaction pooler (detected at start-up): the relay's LISTEN wake-up and sleep lock, a republish run and its lock. A direct (or session-mode) URL to the same database. Unset behind such a pooler: the relay polls at RELAY_POLL_INTERVAL_MS and a republish run's lock is its transactions' (both said in one info line).",
  }),
  pollIntervalMs: setting.milliseconds({
    env: "RELAY_POLL_INTERVAL_MS",
    min: 10,
    max: 600_000,
    default: 1_000,
    description: "Fallback poll when no insert notification arrives (missed NOTIFY, retries coming due).",
  }),
  claimCheckSendWithinHours: setting.integer({
    env: "RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS",
    min: 168,
    max: 8_760,
    unit: "h",
    default: 192,
    description:
      "The oldest a claim-checked event (its `ExtendedPayloadSize` header) may be when its pointer is sent: by the relay (older, it is dead at once), `relay requeue-dead` and `relay republish` (older, refused). At least the 7 days an event may be scheduled ahead; the claim check's bucket must keep objects this long plus the queue's and the DLQ's retention (the stack derives its lifecycle from it).",
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

/**
 * What `relay republish` reads: the database (as `relay status` does), SNS and the topic routing, the
 * same variables as the daemon's, so a run reaches the topics the live relay publishes to.
 */
export const republishSettings = {
  ...databaseSettings,
  databaseSessionUrl: relaySettings.databaseSessionUrl,
  logLevel: commonSettings.logLevel,
  ...awsSettings,
  // A claim-checked row's object is looked for before its pointer is sent again.
  ...s3EndpointSettings,
  topicArns: relaySettings.topicArns,
  defaultTopicArn: relaySettings.defaultTopicArn,
  claimCheckSendWithinHours: relaySettings.claimCheckSendWithinHours,
};

/** What `relay requeue-dead` reads: the database, and how old a claim-checked event may be sent. */
export const requeueDeadSettings = {
  ...databaseSettings,
  claimCheckSendWithinHours: relaySettings.claimCheckSendWithinHours,
};

export type RepublishConfig = ConfigOf<typeof republishSettings>;

/**
 * `relay republish --rate`'s default, in events per second: a replay shares SNS's publish quota and
 * the subscribers' capacity with live traffic, so it goes gently unless told otherwise.
 */
export const REPUBLISH_DEFAULT_RATE = 100;

/**
 * The values the relay's rules across settings compare: the daemon has them from its settings, a
 * `createRelay` caller from its options, and each names them its own way (`SettingNames`).
 */
export interface RelayRuleValues {
  readonly leaseMs: number;
  /** Lease time kept back for a batch's last marks and releases: the statement timeout. */
  readonly leaseMarginMs: number;
  /** The longest one PublishBatch may take, all SDK attempts included. */
  readonly publishTimeoutMs: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  readonly outageBackoffMaxMs: number;
  /**
   * The daemon's drain budget. For a library caller `drainTimeoutMs` is only `drain()`'s default:
   * its drain may bring any Deadline, and no request starts that could not end by it.
   */
  readonly drainTimeoutMs?: number;
  /**
   * The longest a row may still be held once its batch stops: the drain, or for a library caller,
   * whose drain may bring any Deadline, one publish (named as the value it is, RELAY_DRAIN_TIMEOUT_MS or publishTimeoutMs).
   */
  readonly longestHoldMs: number;
}

/** A backoff's base is its first wait, so it may not exceed either cap. */
export const relayRules: readonly SettingRule<RelayRuleValues>[] = [
  notAbove("backoffBaseMs", "backoffMaxMs"),
  notAbove("backoffBaseMs", "outageBackoffMaxMs"),
];

/**
 * The relay's timeout rules, stated once for the daemon and for `createRelay`. Together they make
 * sure a stop never causes a second publish of the same row:
 * - one PublishBatch, all SDK attempts included, ends within the drain, so a batch in flight can finish;
 * - the lease outlives the longest a row may still be held (the drain, or without one a publish)
 *   plus the last statement, so no other relay can claim a row while we may still publish, mark
 *   or release it (and a chunk can start at all: a batch stops starting them before its lease ends).
 */
export const relayTimeoutRules: readonly TimeoutRule<RelayRuleValues>[] = [
  {
    inner: ["publishTimeoutMs"],
    outer: "drainTimeoutMs",
    why: "a PublishBatch in flight, with its retries, must be able to finish within the drain",
  },
  {
    inner: ["longestHoldMs", "leaseMarginMs"],
    outer: "leaseMs",
    why: "a row must stay leased while the drain may still publish or mark it, or another relay publishes it twice",
  },
];

/** The longest one PublishBatch may take: every SDK attempt timing out. */
export function publishTimeoutMs(
  config: Pick<RelayConfig, "awsRequestTimeoutMs" | "awsMaxAttempts">,
): number {
  return config.awsRequestTimeoutMs * config.awsMaxAttempts;
}

/** The daemon's names of the rules' values: their variables. */
const variableOf: Record<keyof RelayRuleValues, string> = {
  leaseMs: relaySettings.leaseMs.env,
  leaseMarginMs: relaySettings.dbStatementTimeoutMs.env,
  publishTimeoutMs: `${relaySettings.awsRequestTimeoutMs.env}×${relaySettings.awsMaxAttempts.env}`,
  backoffBaseMs: relaySettings.backoffBaseMs.env,
  backoffMaxMs: relaySettings.backoffMaxMs.env,
  outageBackoffMaxMs: relaySettings.outageBackoffMaxMs.env,
  drainTimeoutMs: relaySettings.drainTimeoutMs.env,
  longestHoldMs: relaySettings.drainTimeoutMs.env,
};

/**
 * The daemon's form of the rules, for runDaemon (and infra's synth-time check): the drain, the
 * relay's budget and rules under the variables' names, then the topic routing's problems.
 * runDaemon adds the common rules and reports every problem (exit 78).
 */
export const relayTimeouts: DaemonTimeouts<RelayConfig> = (config) => {
  const values: RelayRuleValues = {
    leaseMs: config.leaseMs,
    leaseMarginMs: config.dbStatementTimeoutMs,
    publishTimeoutMs: publishTimeoutMs(config),
    backoffBaseMs: config.backoffBaseMs,
    backoffMaxMs: config.backoffMaxMs,
    outageBackoffMaxMs: config.outageBackoffMaxMs,
    drainTimeoutMs: config.drainTimeoutMs,
    longestHoldMs: config.drainTimeoutMs,
  };
  const name = (key: keyof RelayRuleValues) => variableOf[key];
  return {
    drain: { env: relaySettings.drainTimeoutMs.env, ms: config.drainTimeoutMs },
    rules: budgetRules(relayTimeoutRules, values, name),
    problems: [...brokenRules(relayRules, values, name), ...topicRoutingProblems(config)],
  };
};
