import {
  type BudgetRule,
  brokenRules,
  budgetRules,
  type ConfigOf,
  type ConfigProblem,
  commonSettings,
  notAbove,
  type PlanCacheMode,
  type Setting,
  type SettingNames,
  type SettingRule,
  setting,
  type Timeout,
  type TimeoutRule,
} from "@outbox/shared";

/** Its statements write or read one photo by key: plans that never depend on the values. */
export const API_PLAN_CACHE_MODE: PlanCacheMode = "auto";

/**
 * Everything the photo service reads from its environment. The defaults are the source document's
 * hierarchy: headers 5 s, handler 25 s, server request limit 30 s, keep-alive 65 s (longer than the
 * load balancer's 60 s), equipment client 10 s, pool 25 connections (each living 300 s).
 */
export const apiSettings = {
  ...commonSettings,
  // 25 s of drain + 4 s for closing the ops server and the pool fit the platform's 30 s grace.
  shutdownOverheadMs: setting.milliseconds({
    env: "SHUTDOWN_OVERHEAD_MS",
    min: 0,
    max: 60_000,
    default: 4_000,
    description: "Time reserved after the drain for closing the ops server and the pool and flushing logs.",
  }),
  port: setting.integer({
    env: "API_PORT",
    min: 0,
    max: 65_535,
    default: 8_080,
    description: "Port of the photo service; 0 picks a free port (logged as `port` on `listening`).",
  }),
  host: setting.string({
    env: "API_HOST",
    default: "0.0.0.0",
    description: "Interface the photo service binds to.",
  }),
  headersTimeoutMs: setting.milliseconds({
    env: "API_HEADERS_TIMEOUT_MS",
    min: 100,
    max: 120_000,
    default: 5_000,
    description: "A client must send its request headers within this (slowloris); Go's ReadHeaderTimeout.",
  }),
  handlerTimeoutMs: setting.milliseconds({
    env: "API_HANDLER_TIMEOUT_MS",
    min: 100,
    max: 120_000,
    default: 25_000,
    description:
      "Cap of a request's deadline: min(X-Request-Timeout-Ms, this) bounds its statements and downstream calls.",
  }),
  requestTimeoutMs: setting.milliseconds({
    env: "API_REQUEST_TIMEOUT_MS",
    min: 100,
    max: 600_000,
    default: 30_000,
    description:
      "The hard bound of a request (Go's WriteTimeout): its body must arrive within this, and its answer be written out within this of its headers' arrival, or the connection is destroyed.",
  }),
  keepAliveTimeoutMs: setting.milliseconds({
    env: "API_KEEP_ALIVE_TIMEOUT_MS",
    min: 1_000,
    max: 600_000,
    default: 65_000,
    description:
      "Idle keep-alive connections close after this; longer than the load balancer's, so the balancer always closes first.",
  }),
  loadBalancerIdleTimeoutMs: setting.milliseconds({
    env: "API_LB_IDLE_TIMEOUT_MS",
    formerEnv: "LB_IDLE_TIMEOUT_MS",
    min: 1_000,
    max: 4_000_000,
    default: 60_000,
    description:
      "The load balancer's idle timeout (ALB default 60 s), checked against API_KEEP_ALIVE_TIMEOUT_MS; the CDK app sets both.",
  }),
  drainTimeoutMs: setting.milliseconds({
    env: "API_DRAIN_TIMEOUT_MS",
    min: 100,
    max: 120_000,
    default: 25_000,
    description:
      "Measured from SIGTERM: requests in flight finish within it, then the rest are cut (counted as `cut`).",
  }),
  equipmentUrl: setting.url({
    env: "API_EQUIPMENT_URL",
    formerEnv: "EQUIPMENT_URL",
    description: "Base URL of the equipment service; gear links go to `POST {API_EQUIPMENT_URL}/links`.",
  }),
  equipmentTimeoutMs: setting.milliseconds({
    env: "API_EQUIPMENT_TIMEOUT_MS",
    formerEnv: "EQUIPMENT_TIMEOUT_MS",
    min: 100,
    max: 120_000,
    default: 10_000,
    description:
      "The internal HTTP client's limit per equipment call; the request's remaining time shortens it.",
  }),
  photoTopic: setting.string({
    env: "API_PHOTO_TOPIC",
    default: "photos",
    description: "Outbox topic of `photo.posted` (the relay maps it to an SNS topic ARN).",
  }),
  reconcileIntervalMs: setting.milliseconds({
    env: "API_RECONCILE_INTERVAL_MS",
    min: 0,
    max: 86_400_000,
    default: 30_000,
    description:
      "How often the service retries pending gear links in the background; 0 leaves it to the scheduled `reconcile` task.",
  }),
  reconcileBatchSize: setting.integer({
    env: "API_RECONCILE_BATCH_SIZE",
    min: 1,
    max: 1_000,
    unit: "links",
    default: 50,
    description: "Pending links taken per reconciliation pass.",
  }),
  reconcileBackoffBaseMs: setting.milliseconds({
    env: "API_RECONCILE_BACKOFF_BASE_MS",
    min: 1,
    max: 3_600_000,
    default: 5_000,
    description: "Wait after a link's first failed retry; doubles per attempt.",
  }),
  reconcileBackoffMaxMs: setting.milliseconds({
    env: "API_RECONCILE_BACKOFF_MAX_MS",
    min: 1,
    max: 86_400_000,
    default: 600_000,
    description: "Cap of the reconciliation backoff.",
  }),
};

export type ApiConfig = ConfigOf<typeof apiSettings>;

/** The api's settings that are numbers: what its rules compare. */
type NumericSetting = {
  [K in keyof typeof apiSettings]: (typeof apiSettings)[K] extends Setting<number> ? K : never;
}[keyof typeof apiSettings];

/**
 * Some of the api's settings, as a program that runs part of it has them: the daemon has them all,
 * `api reconcile` its subset, `createPhotoServer` its timeouts. A rule applies when all it reads is given.
 */
export type ApiValues = Partial<Pick<ApiConfig, NumericSetting>>;

/**
 * The service's timeout hierarchy. Inner layers wait less; the keep-alive is the one exception, it
 * must outlast the load balancer's idle timeout. (runDaemon adds the common rules: drain + shutdown
 * overhead < STOP_TIMEOUT_MS, statement timeout < drain.)
 */
const apiTimeoutRules: readonly TimeoutRule<ApiValues>[] = [
  {
    inner: ["headersTimeoutMs"],
    outer: "requestTimeoutMs",
    why: "the headers are part of the request and must arrive well within its limit",
  },
  {
    inner: ["handlerTimeoutMs"],
    outer: "requestTimeoutMs",
    why: "a handler must give up and answer before the server cuts the connection without an answer",
  },
  {
    inner: ["equipmentTimeoutMs"],
    outer: "handlerTimeoutMs",
    why: "a downstream call must give up while the request can still answer",
  },
  {
    inner: ["dbStatementTimeoutMs"],
    outer: "handlerTimeoutMs",
    why: "a statement must give up before the request it belongs to",
  },
  {
    inner: ["loadBalancerIdleTimeoutMs"],
    outer: "keepAliveTimeoutMs",
    why: "the load balancer must close an idle connection first, or it reuses one the server just closed (sporadic 502)",
  },
];

/** Rules that are not a strict sum of timeouts. */
const apiRules: readonly SettingRule<ApiValues>[] = [
  notAbove(
    "handlerTimeoutMs",
    "drainTimeoutMs",
    "a request that arrived just before SIGTERM must be able to finish within the drain",
  ),
  // Checked by the service and by the one-shot `api reconcile` alike, which read the same settings.
  notAbove("reconcileBackoffBaseMs", "reconcileBackoffMaxMs"),
];

/** The daemon's and `api reconcile`'s names of the settings: their variables. */
export const variableOf = (key: NumericSetting): string => apiSettings[key].env;

/**
 * The api's one rule set, on the values given: the timeout hierarchy as budget rules (runDaemon
 * checks and logs them with the common ones; see `findBudgetProblems`) and the problems of every
 * other rule, each setting named by `name`. The daemon (through {@link apiTimeouts}), `api
 * reconcile` and `createPhotoServer` all check with it.
 */
export function checkApi(
  values: ApiValues,
  name: SettingNames<ApiValues>,
): { rules: BudgetRule[]; problems: ConfigProblem[] } {
  return {
    rules: budgetRules(apiTimeoutRules, values, name),
    problems: brokenRules(apiRules, values, name),
  };
}

/** What runDaemon checks before anything starts: the drain and {@link checkApi}'s rules and problems. */
export function apiTimeouts(config: ApiConfig): {
  drain: Timeout;
  rules: BudgetRule[];
  problems: ConfigProblem[];
} {
  // Reported by runDaemon with every other problem (unparsable variables, broken rules), exit 78.
  return {
    drain: { env: apiSettings.drainTimeoutMs.env, ms: config.drainTimeoutMs },
    ...checkApi(config, variableOf),
  };
}
