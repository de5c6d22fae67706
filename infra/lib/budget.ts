import { apiSettings, apiTimeouts } from "@outbox/api";
import { consumerSettings, consumerTimeouts } from "@outbox/consumer";
import { relaySettings, relayTimeouts } from "@outbox/relay";
import { ConfigError, commonSettings, resolveDaemonConfig, type Setting } from "@outbox/shared";
import { StringConcat, Token, Tokenization } from "aws-cdk-lib";

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

/** The stop of a daemon whose stop is its drain: what the relay and the photo service share. */
export interface DrainStopBudget {
  readonly drainTimeoutMs: number;
  readonly shutdownOverheadMs: number;
  readonly marginMs: number;
  /** The container's (and so the task's) stopTimeout. */
  readonly stopTimeoutSeconds: number;
  /** Passed as STOP_TIMEOUT_MS: exactly the stopTimeout, so the daemon checks the real grace. */
  readonly stopTimeoutMs: number;
  readonly opsPort: number;
}

export type RelayBudget = DrainStopBudget;

/** stopTimeout = drain + shutdown overhead + margin. */
function drainStopBudget(
  service: string,
  drainTimeoutMs: number,
  shutdownOverheadMs: number,
): DrainStopBudget {
  const stopTimeoutSeconds = checkStopTimeout(
    service,
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

/** Relay: stopTimeout = drain + shutdown overhead + margin. */
export function relayBudget(input: RelayBudgetInput = {}): RelayBudget {
  return drainStopBudget(
    "relay",
    input.drainTimeoutMs ?? defaultOf(relaySettings.drainTimeoutMs),
    input.shutdownOverheadMs ?? common.shutdownOverheadMs,
  );
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

export interface ApiBudgetInput {
  /** API_DRAIN_TIMEOUT_MS; default: the service's own default. */
  readonly drainTimeoutMs?: number;
}

export interface ApiBudget extends DrainStopBudget {
  readonly port: number;
  /** API_HANDLER_TIMEOUT_MS: the longest a request may run. */
  readonly handlerTimeoutMs: number;
  /**
   * The target group's deregistration delay: ECS stops a task only after its target drained, so the
   * load balancer must wait out the longest request (the handler cap) before giving up on it.
   */
  readonly deregistrationDelaySeconds: number;
  /** The load balancer's idle timeout (API_LB_IDLE_TIMEOUT_MS), below the service's keep-alive. */
  readonly loadBalancerIdleTimeoutSeconds: number;
  readonly keepAliveTimeoutMs: number;
}

/**
 * The photo service: stopTimeout = drain + shutdown overhead + margin, like the daemons; the
 * deregistration delay outlasts the handler cap; the ALB's idle timeout stays the service's
 * API_LB_IDLE_TIMEOUT_MS default (60 s), which its start-up check keeps below the 65 s keep-alive.
 */
export function apiBudget(input: ApiBudgetInput = {}): ApiBudget {
  const handlerTimeoutMs = defaultOf(apiSettings.handlerTimeoutMs);
  return {
    ...drainStopBudget(
      "api",
      input.drainTimeoutMs ?? defaultOf(apiSettings.drainTimeoutMs),
      defaultOf(apiSettings.shutdownOverheadMs),
    ),
    opsPort: defaultOf(apiSettings.opsPort),
    port: defaultOf(apiSettings.port),
    handlerTimeoutMs,
    deregistrationDelaySeconds: wholeSeconds(handlerTimeoutMs + STOP_MARGIN_MS),
    loadBalancerIdleTimeoutSeconds: wholeSeconds(defaultOf(apiSettings.loadBalancerIdleTimeoutMs)),
    keepAliveTimeoutMs: defaultOf(apiSettings.keepAliveTimeoutMs),
  };
}

/** The settings of each daemon infra deploys. */
export const settingsFor = { relay: relaySettings, consumer: consumerSettings, api: apiSettings } as const;

export type Daemon = keyof typeof settingsFor;
type Environment = Readonly<Record<string, string | undefined>>;

/** Each daemon's start-up check: its settings with runDaemon's common timeout rules and its own. */
const resolveConfig: Record<Daemon, (env: Environment) => unknown> = {
  relay: (env) => resolveDaemonConfig(relaySettings, relayTimeouts, env),
  consumer: (env) => resolveDaemonConfig(consumerSettings, consumerTimeouts, env),
  api: (env) => resolveDaemonConfig(apiSettings, apiTimeouts, env),
};

/** Every environment variable a daemon reads: the container environment may use these names only. */
export function envNamesOf(daemon: Daemon): ReadonlySet<string> {
  return new Set(Object.values(settingsFor[daemon]).map((s) => s.env));
}

/**
 * Stand-ins for what the synth cannot know. DATABASE_URL comes from Secrets Manager; a URL that
 * CloudFormation fills in at deploy time (a queue URL) is still a token; CONSUMER_HANDLERS_MODULE
 * names a file inside the consumer's image, not on the machine running the synth, so it is left to
 * the daemon itself (the stack refuses to synthesize without one). So does verify-full's CA bundle
 * (DB_SSL_CA_FILE, read at start-up): the check runs as `require`, which reads no file, and the
 * bundle's place in the image is checked by infra/test/packaging.test.ts. Other tokens stand for
 * themselves.
 */
// With sslmode=require: a task that leaves DB_SSL_MODE at auto is checked reading no file too.
const DATABASE_URL_PLACEHOLDER = "postgres://placeholder@database:5432/app?sslmode=require";
const DEPLOY_TIME_URL_PLACEHOLDER = "https://deploy-time.invalid/";
const CHECKED_BY_THE_IMAGE = ["CONSUMER_HANDLERS_MODULE"];
// A topic ARN CloudFormation fills in at deploy time: the relay checks each ARN's shape at start-up.
const DEPLOY_TIME_TOPIC_ARN = "arn:aws:sns:us-east-1:000000000000:deploy-time";
const TOPIC_ARN_SETTINGS: readonly string[] = [
  relaySettings.topicArns.env,
  relaySettings.defaultTopicArn.env,
];
const TLS_MODE_READING_NO_FILE: Readonly<Record<string, string>> = { "verify-full": "require" };

function checkableEnvironment(daemon: Daemon, environment: Readonly<Record<string, string>>): Environment {
  const urls = new Set(
    Object.values(settingsFor[daemon])
      .filter((s) => s.type === "url")
      .map((s) => s.env),
  );
  const env: Record<string, string> = { DATABASE_URL: DATABASE_URL_PLACEHOLDER };
  for (const [name, value] of Object.entries(environment)) {
    if (CHECKED_BY_THE_IMAGE.includes(name)) continue;
    if (name === commonSettings.dbSslMode.env) env[name] = TLS_MODE_READING_NO_FILE[value] ?? value;
    else if (TOPIC_ARN_SETTINGS.includes(name) && Token.isUnresolved(value)) {
      env[name] = Tokenization.reverseString(value)
        .mapTokens({ mapToken: () => DEPLOY_TIME_TOPIC_ARN })
        .join(new StringConcat());
    } else env[name] = urls.has(name) && Token.isUnresolved(value) ? DEPLOY_TIME_URL_PLACEHOLDER : value;
  }
  return env;
}

/**
 * A daemon's own start-up verdict on a task environment, from `resolveDaemonConfig`, the check
 * runDaemon runs before anything starts: its settings parse and every timeout rule holds (runDaemon's
 * common ones and the daemon's own), or the `ENV: message` lines it would print before exiting 78.
 */
export function startupProblems(daemon: Daemon, environment: Readonly<Record<string, string>>): string[] {
  try {
    resolveConfig[daemon](checkableEnvironment(daemon, environment));
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.problems.map((problem) => `${problem.env}: ${problem.message}`);
  }
}

/** Fails the synth, not the deployment: a task its daemon would refuse to start (exit 78) never ships. */
export function assertStartsUp(daemon: Daemon, environment: Readonly<Record<string, string>>): void {
  const problems = startupProblems(daemon, environment);
  if (problems.length > 0) {
    throw new Error(
      `${daemon}: the task environment would fail the ${daemon}'s start-up checks:\n${problems.join("\n")}`,
    );
  }
}
