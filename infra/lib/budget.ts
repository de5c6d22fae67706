import { consumerSettings } from "@outbox/consumer";
import { relaySettings, relayTimeouts } from "@outbox/relay";
import { type BudgetRule, findBudgetProblems, loadConfig, type Setting, type Timeout } from "@outbox/shared";

/**
 * Every number the infrastructure derives from the daemons' own configuration. Nothing here is a copy
 * of a daemon default: each default is read from the setting that parses it (`relaySettings`,
 * `consumerSettings`), so changing a default in an app changes the task definition on the next synth.
 * Plain functions without CDK, so the tests and the docs can show the arithmetic on its own.
 */

/** Fargate refuses a container `stopTimeout` above 120 s. */
export const FARGATE_MAX_STOP_TIMEOUT_SECONDS = 120;

/**
 * Slack between the daemon's own worst case (its drain plus its shutdown overhead) and the platform's
 * SIGKILL: signal delivery through the init process, the event loop being busy when SIGTERM lands,
 * and the final log lines reaching CloudWatch. Infra's own number; the daemons know nothing of it.
 */
export const STOP_MARGIN_MS = 5_000;

/**
 * Genuine handler attempts a message gets before the queue's redrive moves it to the DLQ, on top of
 * the receives that stops spend (see {@link redrive}). Poison messages do not wait for these: the
 * consumer sends them to the DLQ itself at once.
 */
export const HANDLER_ATTEMPTS = 5;

/**
 * Stop waves one message may live through while it stays in the queue: a deployment, the circuit
 * breaker's rollback of it, and one scale-in. See {@link redrive}.
 */
export const STOP_WAVES = 3;

/** The longest retention SQS allows (14 days): the DLQ keeps what the queue gave up for as long as possible. */
export const DLQ_RETENTION_SECONDS = 14 * 24 * 3600;

function defaultOf<T>(setting: Setting<T>): T {
  if (setting.default === undefined) throw new Error(`${setting.env} has no default`);
  return setting.default;
}

const common = {
  shutdownOverheadMs: defaultOf(relaySettings.shutdownOverheadMs),
  dbStatementTimeoutMs: defaultOf(relaySettings.dbStatementTimeoutMs),
  opsPort: defaultOf(relaySettings.opsPort),
};

/** ECS stop timeouts are whole seconds; rounding up keeps every inequality strict. */
function wholeSeconds(ms: number): number {
  return Math.ceil(ms / 1000);
}

function checkStopTimeout(service: string, seconds: number): number {
  if (seconds > FARGATE_MAX_STOP_TIMEOUT_SECONDS) {
    throw new Error(
      `${service}: the stop budget needs a ${seconds} s stopTimeout, above the Fargate maximum of ` +
        `${FARGATE_MAX_STOP_TIMEOUT_SECONDS} s; lower its drain timeout`,
    );
  }
  return seconds;
}

export interface RelayBudgetInput {
  /** RELAY_DRAIN_TIMEOUT_MS; default: the relay's own default. */
  readonly drainTimeoutMs?: number;
  /** SHUTDOWN_OVERHEAD_MS; default: the shared default. */
  readonly shutdownOverheadMs?: number;
}

export interface RelayBudget {
  readonly drainTimeoutMs: number;
  readonly shutdownOverheadMs: number;
  readonly marginMs: number;
  /** The container's (and so the task's) stopTimeout. */
  readonly stopTimeoutSeconds: number;
  /** Passed as STOP_TIMEOUT_MS: exactly the stopTimeout, so the daemon checks the real grace. */
  readonly stopTimeoutMs: number;
  readonly opsPort: number;
}

/** Relay: stopTimeout = drain + shutdown overhead + margin. */
export function relayBudget(input: RelayBudgetInput = {}): RelayBudget {
  const drainTimeoutMs = input.drainTimeoutMs ?? defaultOf(relaySettings.drainTimeoutMs);
  const shutdownOverheadMs = input.shutdownOverheadMs ?? common.shutdownOverheadMs;
  const stopTimeoutSeconds = checkStopTimeout(
    "relay",
    wholeSeconds(drainTimeoutMs + shutdownOverheadMs + STOP_MARGIN_MS),
  );
  return {
    drainTimeoutMs,
    shutdownOverheadMs,
    marginMs: STOP_MARGIN_MS,
    stopTimeoutSeconds,
    stopTimeoutMs: stopTimeoutSeconds * 1000,
    opsPort: common.opsPort,
  };
}

export interface ConsumerBudgetInput {
  readonly drainTimeoutMs?: number;
  readonly shutdownOverheadMs?: number;
  readonly waitTimeSeconds?: number;
  readonly visibilityTimeoutSeconds?: number;
  /** Upper bound of the consumer service's task count (auto-scaling maximum). */
  readonly maxTaskCount: number;
}

export interface ConsumerBudget {
  readonly drainTimeoutMs: number;
  readonly shutdownOverheadMs: number;
  readonly waitTimeSeconds: number;
  readonly marginMs: number;
  readonly stopTimeoutSeconds: number;
  readonly stopTimeoutMs: number;
  readonly opsPort: number;
  /** The queue's default VisibilityTimeout: the consumer's lease, taken on receive and on each heartbeat. */
  readonly visibilityTimeoutSeconds: number;
  /** A message's deadline (CONSUMER_HANDLER_TIMEOUT_MS) plus CONSUMER_VISIBILITY_MARGIN_MS. */
  readonly handlerTimeoutMs: number;
  readonly visibilityMarginMs: number;
  /** The longest a received message stays invisible per attempt: a full deadline or the longest retry backoff. */
  readonly longestInvisibleSeconds: number;
  readonly queueRetentionSeconds: number;
  readonly dlqRetentionSeconds: number;
  readonly maxReceiveCount: number;
  readonly handlerAttempts: number;
  readonly releaseAllowance: number;
}

/** The consumer's stop budget, lease and redrive, derived from `consumerSettings`. */
export function consumerBudget(input: ConsumerBudgetInput): ConsumerBudget {
  const drainTimeoutMs = input.drainTimeoutMs ?? defaultOf(consumerSettings.drainTimeoutMs);
  const shutdownOverheadMs = input.shutdownOverheadMs ?? common.shutdownOverheadMs;
  const waitTimeSeconds = input.waitTimeSeconds ?? defaultOf(consumerSettings.waitTimeSeconds);
  // Conservative on purpose: SIGTERM may land just after a long poll opened. The consumer counts that
  // poll inside its drain, but the task must not depend on it, so the poll's wait is added again.
  const stopTimeoutSeconds = checkStopTimeout(
    "consumer",
    wholeSeconds(waitTimeSeconds * 1000 + drainTimeoutMs + shutdownOverheadMs + STOP_MARGIN_MS),
  );
  const visibilityTimeoutSeconds =
    input.visibilityTimeoutSeconds ?? defaultOf(consumerSettings.visibilityTimeoutSeconds);
  const handlerTimeoutMs = defaultOf(consumerSettings.handlerTimeoutMs);
  const visibilityMarginMs = defaultOf(consumerSettings.visibilityMarginMs);
  const longestInvisibleSeconds = Math.max(
    visibilityTimeoutSeconds,
    wholeSeconds(handlerTimeoutMs + visibilityMarginMs),
    defaultOf(consumerSettings.retryMaxSeconds),
  );

  // Why maxReceiveCount is not the usual 3-5: SQS counts every receive, and a stopping consumer hands
  // back the messages it received but has not started (ChangeMessageVisibility 0) — each of those
  // comes back with ApproximateReceiveCount + 1 without a handler ever failing. In one stop wave (a
  // rolling deployment, its rollback, a scale-in) a message released by one old task can be received
  // by another old task that is stopped next, so one wave can spend up to one receive per task. The
  // redrive must absorb STOP_WAVES such waves at the largest task count on top of the genuine
  // attempts, or a deployment alone could push a healthy message into the DLQ.
  const releaseAllowance = STOP_WAVES * input.maxTaskCount;
  const maxReceiveCount = HANDLER_ATTEMPTS + releaseAllowance;

  const queueRetentionSeconds = defaultOf(consumerSettings.queueRetentionHours) * 3600;
  return {
    drainTimeoutMs,
    shutdownOverheadMs,
    waitTimeSeconds,
    marginMs: STOP_MARGIN_MS,
    stopTimeoutSeconds,
    stopTimeoutMs: stopTimeoutSeconds * 1000,
    opsPort: common.opsPort,
    visibilityTimeoutSeconds,
    handlerTimeoutMs,
    visibilityMarginMs,
    longestInvisibleSeconds,
    queueRetentionSeconds,
    dlqRetentionSeconds: DLQ_RETENTION_SECONDS,
    maxReceiveCount,
    handlerAttempts: HANDLER_ATTEMPTS,
    releaseAllowance,
  };
}

/** Every environment variable a daemon reads: the container environment may use these names only. */
export const relayEnvNames: ReadonlySet<string> = new Set(Object.values(relaySettings).map((s) => s.env));
export const consumerEnvNames: ReadonlySet<string> = new Set(
  Object.values(consumerSettings).map((s) => s.env),
);

export const settingsFor = { relay: relaySettings, consumer: consumerSettings } as const;

/**
 * The relay's own start-up verdict on a task environment: its settings parse it and its budget rules
 * (runDaemon's common ones and `relayTimeouts`) hold, or the messages it would print before exiting 78.
 * Values CloudFormation fills in at deploy time (tokens) stand for themselves; DATABASE_URL, a secret,
 * gets a placeholder.
 */
export function relayStartupProblems(environment: Readonly<Record<string, string>>): string[] {
  const env = { DATABASE_URL: "postgres://placeholder@database:5432/app", ...environment };
  let config: ReturnType<typeof loadConfig<typeof relaySettings>>;
  try {
    config = loadConfig(relaySettings, env);
  } catch (error) {
    const problems = (error as { problems?: { env: string; message: string }[] }).problems;
    if (!problems) throw error;
    return problems.map((problem) => `${problem.env}: ${problem.message}`);
  }
  const { drain, rules } = relayTimeouts(config);
  const common: BudgetRule[] = [
    {
      inner: [drain, { env: "SHUTDOWN_OVERHEAD_MS", ms: config.shutdownOverheadMs }],
      outer: { env: "STOP_TIMEOUT_MS", ms: config.stopTimeoutMs },
      why: "the drain must end before the platform's SIGKILL",
    },
    {
      inner: [{ env: "DB_STATEMENT_TIMEOUT_MS", ms: config.dbStatementTimeoutMs } satisfies Timeout],
      outer: drain,
      why: "a statement must give up before the drain it belongs to",
    },
  ];
  return findBudgetProblems([...common, ...rules]).map((problem) => `${problem.env}: ${problem.message}`);
}
