import { Stack } from "aws-cdk-lib";
import type { Construct } from "constructs";
import { assertStartsUp, type Daemon, envNamesOf, type RelayBudget } from "./budget.js";
import { DaemonService, type DaemonServiceProps } from "./daemon-service.js";
import type { RelayServiceOptions } from "./stack-props.js";

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
 * One daemon's service. Its container environment is the extra variables from its props (which may
 * not set what the stack derives) and the derived ones. Fails the synth, not the deployment: a task
 * the daemon would refuse to start (exit 78) never ships.
 */
export function checkedDaemonService(
  scope: Construct,
  id: string,
  daemon: Daemon,
  shared: SharedServiceProps,
  { budget, options, computed, desiredCount }: DaemonTask,
): DaemonService {
  const derived: Record<string, string> = {
    STOP_TIMEOUT_MS: String(budget.stopTimeoutMs),
    SHUTDOWN_OVERHEAD_MS: String(budget.shutdownOverheadMs),
    OPS_PORT: String(budget.opsPort),
    // Only where the daemon talks to SNS or SQS (the api reads no AWS setting).
    ...(envNamesOf(daemon).has("AWS_REGION") ? { AWS_REGION: Stack.of(scope).region } : {}),
    ...computed,
  };
  const extra = { ...(options.environment ?? {}) };
  const clash = Object.keys(extra).filter((env) => env in derived || FROM_SECRETS.includes(env));
  if (clash.length > 0) {
    throw new Error(`${daemon}: ${clash.join(", ")} are derived by the stack; set them through its props`);
  }
  const environment = { ...extra, ...derived };
  assertStartsUp(daemon, environment);
  return new DaemonService(scope, id, {
    ...shared,
    name: daemon,
    allowedEnvNames: envNamesOf(daemon),
    environment,
    stopTimeoutSeconds: budget.stopTimeoutSeconds,
    opsPort: budget.opsPort,
    desiredCount,
    ...(options.cpu ? { cpu: options.cpu } : {}),
    ...(options.memoryLimitMiB ? { memoryLimitMiB: options.memoryLimitMiB } : {}),
  });
}
