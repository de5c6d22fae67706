import { type ConfigOf, commonSettings, type PlanCacheMode, setting } from "@outbox/shared";

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
    description: "The server's limit for receiving a whole request and answering it; Go's WriteTimeout.",
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
  commitDelayMs: setting.milliseconds({
    env: "API_COMMIT_DELAY_MS",
    min: 0,
    max: 60_000,
    default: 0,
    description:
      "Drills only: each POST holds its transaction this long before the commit, so a stop finds requests in flight.",
  }),
};

export type ApiConfig = ConfigOf<typeof apiSettings>;
