import * as ecs from "aws-cdk-lib/aws-ecs";
import type * as iam from "aws-cdk-lib/aws-iam";
import type * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import type { Construct } from "constructs";
import { runtimePlatform } from "./cpu-architecture.js";
import type { DaemonService } from "./daemon-service.js";
import { isPlatformVariable } from "./platform-environment.js";

export interface OneOffTaskProps {
  /** The daemon the task belongs to: its settings and log group are reused. */
  readonly service: DaemonService;
  readonly image: ecs.ContainerImage;
  readonly containerName: string;
  readonly command: string[];
  /** The settings the command reads; the service's values for them are passed on, nothing else. */
  readonly reads: ReadonlySet<string>;
  readonly databaseUrlSecret: secretsmanager.ISecret;
  readonly databaseUrlSecretField?: string;
  /** Default: a role of its own with no permission. */
  readonly taskRole?: iam.IRole;
  readonly executionRole?: iam.IRole;
}

/**
 * A task definition for one pass of a daemon's command (a migration, a reconciliation), created in
 * `scope` as "Task". It connects as its service does: the service's values for the settings the
 * command reads (so the two never disagree on TLS, timeouts or the equipment service), the platform's
 * variables (an extra CA, telemetry), the same secret.
 */
export function addOneOffTask(
  scope: Construct,
  props: OneOffTaskProps,
): { taskDefinition: ecs.FargateTaskDefinition; container: ecs.ContainerDefinition } {
  const taskDefinition = new ecs.FargateTaskDefinition(scope, "Task", {
    cpu: 256,
    memoryLimitMiB: 512,
    // The service's image, so the service's CPU.
    runtimePlatform: runtimePlatform(props.service.cpuArchitecture),
    ...(props.taskRole ? { taskRole: props.taskRole } : {}),
    ...(props.executionRole ? { executionRole: props.executionRole } : {}),
  });
  const environment = Object.fromEntries(
    Object.entries(props.service.environment).filter(
      ([name]) => props.reads.has(name) || isPlatformVariable(name),
    ),
  );
  const container = taskDefinition.addContainer(props.containerName, {
    containerName: props.containerName,
    image: props.image,
    command: props.command,
    essential: true,
    environment,
    secrets: {
      DATABASE_URL: ecs.Secret.fromSecretsManager(props.databaseUrlSecret, props.databaseUrlSecretField),
    },
    // tini as PID 1: node as PID 1 would ignore the SIGTERM of a stop and wait for the SIGKILL.
    linuxParameters: new ecs.LinuxParameters(scope, "Linux", { initProcessEnabled: true }),
    readonlyRootFilesystem: true,
    logging: ecs.LogDrivers.awsLogs({
      logGroup: props.service.logGroup,
      streamPrefix: props.containerName,
      // A one-off's output is its result (its last line carries the totals, written just before the
      // exit): every line, even if a throttle slows it down. Nothing else in the task can be stalled.
      mode: ecs.AwsLogDriverMode.BLOCKING,
    }),
  });
  return { taskDefinition, container };
}
