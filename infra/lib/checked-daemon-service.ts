import { Stack } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { assertStartsUp, type Daemon, envNamesOf, type RelayBudget } from "./budget.js";
import { DaemonService, type DaemonServiceProps } from "./daemon-service.js";
import type { DaemonTelemetry } from "./daemon-telemetry.js";
import { METRICS_NAMESPACE } from "./metrics-namespace.js";
import type { RelayServiceOptions } from "./stack-props.js";
import { TelemetrySidecar } from "./telemetry-sidecar.js";

/** Injected by DaemonService from Secrets Manager, never as plain environment. */
const FROM_SECRETS = ["DATABASE_URL"];

/** What one daemon's service takes from the stack beyond the props both services share. */
export interface DaemonTask {
  readonly budget: Pick<
    RelayBudget,
    "stopTimeoutMs" | "stopTimeoutSeconds" | "shutdownOverheadMs" | "opsPort"
  >;
  readonly options: Pick<RelayServiceOptions, "environment" | "cpu" | "memoryLimitMiB">;
  /** The daemon's own variables derived by the stack; the budget's common ones are added here. */
  readonly computed: Readonly<Record<string, string>>;
  readonly desiredCount: number;
  /** The task's collector sidecar (daemon-telemetry.ts); undefined: none. */
  readonly telemetry: DaemonTelemetry | undefined;
}

export interface CheckedDaemon {
  readonly daemon: DaemonService;
  /** Undefined when the task has no collector sidecar. */
  readonly telemetry: TelemetrySidecar | undefined;
}

export type SharedServiceProps = Omit<
  DaemonServiceProps,
  | "name"
  | "allowedEnvNames"
  | "environment"
  | "stopTimeoutSeconds"
  | "opsPort"
  | "desiredCount"
  | "cpu"
  | "memoryLimitMiB"
>;

/**
 * One daemon's service and its collector sidecar. Its container environment is the extra variables
 * from its props (which may not set what the stack derives) and the derived ones, the OTEL_* ones
 * that point its traces at the sidecar among them. Fails the synth, not the deployment: a task the
 * daemon would refuse to start (exit 78) never ships.
 */
export function checkedDaemonService(
  scope: Construct,
  id: string,
  daemon: Daemon,
  shared: SharedServiceProps,
  { budget, options, computed, desiredCount, telemetry }: DaemonTask,
): CheckedDaemon {
  const derived: Record<string, string> = {
    STOP_TIMEOUT_MS: String(budget.stopTimeoutMs),
    SHUTDOWN_OVERHEAD_MS: String(budget.shutdownOverheadMs),
    OPS_PORT: String(budget.opsPort),
    // Only where the daemon talks to SNS or SQS (the api reads no AWS setting).
    ...(envNamesOf(daemon).has("AWS_REGION") ? { AWS_REGION: Stack.of(scope).region } : {}),
    ...computed,
  };
  // Points the daemon at its task's collector: the one-off tasks, which run without one, do not get it.
  const sidecarEnvironment = telemetry?.tracesEnvironment ?? {};
  const extra = { ...(options.environment ?? {}) };
  const clash = Object.keys(extra).filter(
    (env) => env in derived || env in sidecarEnvironment || FROM_SECRETS.includes(env),
  );
  if (clash.length > 0) {
    throw new Error(`${daemon}: ${clash.join(", ")} are derived by the stack; set them through its props`);
  }
  // TLS to the database said in the template, not left to a default: verified against the RDS
  // bundle the image ships. A service's own DB_SSL_MODE (another CA, a proxy) replaces it.
  const environment = { DB_SSL_MODE: "verify-full", ...extra, ...derived };
  assertStartsUp(daemon, { ...environment, ...sidecarEnvironment });
  const service = new DaemonService(scope, id, {
    ...shared,
    name: daemon,
    allowedEnvNames: envNamesOf(daemon),
    environment,
    sidecarEnvironment,
    stopTimeoutSeconds: budget.stopTimeoutSeconds,
    opsPort: budget.opsPort,
    desiredCount,
    ...(options.cpu ? { cpu: options.cpu } : {}),
    ...(options.memoryLimitMiB ? { memoryLimitMiB: options.memoryLimitMiB } : {}),
  });
  const sidecar = telemetry
    ? new TelemetrySidecar(scope, `${id}Metrics`, {
        taskDefinition: service.taskDefinition,
        daemonContainer: service.container,
        opsPort: budget.opsPort,
        metrics: telemetry.metrics,
        traces: telemetry.tracesEnvironment !== undefined,
        namespace: METRICS_NAMESPACE,
        service: daemon,
        ...(telemetry.collectorImage ? { collectorImage: telemetry.collectorImage } : {}),
        ...(shared.logRetention ? { logRetention: shared.logRetention } : {}),
      })
    : undefined;
  return { daemon: service, telemetry: sidecar };
}
