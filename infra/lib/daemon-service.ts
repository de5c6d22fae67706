import { Duration, RemovalPolicy, Size } from "aws-cdk-lib";
import type * as ec2 from "aws-cdk-lib/aws-ec2";
import * as ecs from "aws-cdk-lib/aws-ecs";
import type * as iam from "aws-cdk-lib/aws-iam";
import * as logs from "aws-cdk-lib/aws-logs";
import type * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import { Construct } from "constructs";
import { FARGATE_MAX_STOP_TIMEOUT_SECONDS } from "./budget.js";
import { type CpuArchitectureName, DEFAULT_CPU_ARCHITECTURE, runtimePlatform } from "./cpu-architecture.js";
import {
  closestName,
  isPlatformVariable,
  PLATFORM_ENV_NAMES,
  PLATFORM_ENV_PREFIXES,
} from "./platform-environment.js";

/**
 * The awslogs driver's buffer in non-blocking mode. Lines are dropped only once this much is waiting
 * for CloudWatch Logs: minutes of the daemons' output at their rates (a JSON line is a few hundred
 * bytes), so a throttle long enough to fill it is also long enough to be noticed.
 */
export const LOG_BUFFER_SIZE = Size.mebibytes(25);

/** Why a name is refused: each unknown name with the setting it most likely meant. */
function unknownVariablesMessage(
  service: string,
  unknown: readonly string[],
  own: ReadonlySet<string>,
): string {
  const named = unknown.map((env) => {
    const meant = closestName(env, [...own, ...PLATFORM_ENV_NAMES]);
    return meant ? `${env} (did you mean ${meant}?)` : env;
  });
  const platform = [...PLATFORM_ENV_NAMES, ...PLATFORM_ENV_PREFIXES.map((prefix) => `${prefix}*`)];
  return (
    `${service}: the daemon reads no variable named ${named.join(", ")}. ` +
    `Besides its own settings a task may set only ${platform.join(", ")}`
  );
}

export interface DaemonServiceProps {
  readonly cluster: ecs.ICluster;
  /** Container name, log stream prefix and `service` in names: `relay` or `consumer`. */
  readonly name: string;
  readonly image: ecs.ContainerImage;
  /**
   * Env names the daemon reads; any other name in `environment` fails the synth, except the
   * platform's (platform-environment.ts).
   */
  readonly allowedEnvNames: ReadonlySet<string>;
  readonly environment: Readonly<Record<string, string>>;
  /**
   * Variables that point the daemon at a sidecar of its own task (the collector's OTLP endpoint):
   * set in its container, not in `environment`, so its one-off tasks, which have no sidecar, never get them.
   */
  readonly sidecarEnvironment?: Readonly<Record<string, string>>;
  /** Secret holding the Postgres URL, injected as DATABASE_URL. */
  readonly databaseUrlSecret: secretsmanager.ISecret;
  /** JSON key inside the secret, when the secret is a JSON document rather than the bare URL. */
  readonly databaseUrlSecretField?: string;
  /**
   * The daemon reads its password from the secret at each new connection (DATABASE_SECRET_ARN), so a
   * rotation needs no redeploy; its task role may read the secret. Not with `databaseUrlSecretField`.
   */
  readonly databaseSecretRotation?: boolean;
  readonly stopTimeoutSeconds: number;
  /** OPS_PORT: the container health check calls /livez on it. */
  readonly opsPort: number;
  readonly desiredCount: number;
  readonly cpu?: number;
  readonly memoryLimitMiB?: number;
  /** The CPU the image was built for. Default: the documented build's (cpu-architecture.ts). */
  readonly cpuArchitecture?: CpuArchitectureName;
  readonly logRetention?: logs.RetentionDays;
  readonly vpcSubnets?: ec2.SubnetSelection;
}

/**
 * One daemon as an ECS Fargate service: a task definition with the daemon's container (tini as PID 1,
 * the computed stopTimeout, a /livez health check, non-blocking CloudWatch logs with retention,
 * DATABASE_URL from Secrets Manager) and a service that rolls back a failing deployment on its own.
 */
export class DaemonService extends Construct {
  readonly taskDefinition: ecs.FargateTaskDefinition;
  readonly container: ecs.ContainerDefinition;
  readonly service: ecs.FargateService;
  readonly logGroup: logs.LogGroup;
  readonly taskRole: iam.IRole;
  /** Shared with the one-off tasks of the same image (one-off-task.ts). */
  readonly cpuArchitecture: CpuArchitectureName;
  /**
   * The container's plain environment but `sidecarEnvironment`: what its one-off tasks reuse
   * (DATABASE_URL is a secret, not in it).
   */
  readonly environment: Readonly<Record<string, string>>;

  constructor(scope: Construct, id: string, props: DaemonServiceProps) {
    super(scope, id);
    const unknown = Object.keys({ ...props.environment, ...props.sidecarEnvironment }).filter(
      (env) => !props.allowedEnvNames.has(env) && !isPlatformVariable(env),
    );
    if (unknown.length > 0) {
      throw new Error(unknownVariablesMessage(props.name, unknown, props.allowedEnvNames));
    }
    if (props.stopTimeoutSeconds > FARGATE_MAX_STOP_TIMEOUT_SECONDS) {
      throw new Error(`${props.name}: stopTimeout ${props.stopTimeoutSeconds} s exceeds the Fargate maximum`);
    }
    if (String(props.stopTimeoutSeconds * 1000) !== props.environment.STOP_TIMEOUT_MS) {
      throw new Error(`${props.name}: STOP_TIMEOUT_MS must equal the container's stopTimeout`);
    }

    this.logGroup = new logs.LogGroup(this, "Logs", {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.cpuArchitecture = props.cpuArchitecture ?? DEFAULT_CPU_ARCHITECTURE;
    this.taskDefinition = new ecs.FargateTaskDefinition(this, "Task", {
      cpu: props.cpu ?? 256,
      memoryLimitMiB: props.memoryLimitMiB ?? 512,
      runtimePlatform: runtimePlatform(this.cpuArchitecture),
    });
    this.taskRole = this.taskDefinition.taskRole;
    if (props.databaseSecretRotation) {
      if (props.databaseUrlSecretField) {
        throw new Error(
          `${props.name}: databaseSecretRotation reads the whole secret (a URL or an RDS secret's JSON); it cannot be used with databaseUrlSecretField`,
        );
      }
      props.databaseUrlSecret.grantRead(this.taskRole);
    }
    this.environment = { ...props.environment };

    const livez = `http://127.0.0.1:${props.opsPort}/livez`;
    this.container = this.taskDefinition.addContainer(props.name, {
      containerName: props.name,
      image: props.image,
      essential: true,
      environment: {
        ...this.environment,
        ...props.sidecarEnvironment,
        ...(props.databaseSecretRotation ? { DATABASE_SECRET_ARN: props.databaseUrlSecret.secretArn } : {}),
      },
      secrets: {
        DATABASE_URL: props.databaseUrlSecretField
          ? ecs.Secret.fromSecretsManager(props.databaseUrlSecret, props.databaseUrlSecretField)
          : ecs.Secret.fromSecretsManager(props.databaseUrlSecret),
      },
      // SIGTERM → SIGKILL grace: the drain, the shutdown overhead and a margin (see budget.ts).
      stopTimeout: Duration.seconds(props.stopTimeoutSeconds),
      // tini as PID 1: forwards SIGTERM to node and reaps zombies; node never runs as PID 1.
      linuxParameters: new ecs.LinuxParameters(this, "Linux", { initProcessEnabled: true }),
      readonlyRootFilesystem: true,
      // The slim image has no curl: Node's own fetch asks /livez (503 once the poll or claim loop has
      // not turned for longer than its bound; no answer when the event loop is blocked).
      healthCheck: {
        command: [
          "CMD",
          "node",
          "-e",
          `fetch(${JSON.stringify(livez)},{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))`,
        ],
        interval: Duration.seconds(15),
        timeout: Duration.seconds(5),
        retries: 3,
        startPeriod: Duration.seconds(30),
      },
      logging: ecs.LogDrivers.awsLogs({
        logGroup: this.logGroup,
        streamPrefix: props.name,
        // Non-blocking: the daemons write their logs synchronously, so in blocking mode a CloudWatch
        // Logs throttle would stop the event loop at the next line, and with it the heartbeats that
        // keep leases alive. The buffer is flushed when the container stops, so the drain summary
        // is lost only if the buffer was already full.
        mode: ecs.AwsLogDriverMode.NON_BLOCKING,
        maxBufferSize: LOG_BUFFER_SIZE,
      }),
    });

    this.service = new ecs.FargateService(this, "Service", {
      cluster: props.cluster,
      taskDefinition: this.taskDefinition,
      desiredCount: props.desiredCount,
      // Start the new tasks before stopping the old ones: a deployment never leaves the work unowned.
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      circuitBreaker: { enable: true, rollback: true },
      assignPublicIp: false,
      ...(props.vpcSubnets ? { vpcSubnets: props.vpcSubnets } : {}),
      enableExecuteCommand: false,
      propagateTags: ecs.PropagatedTagSource.SERVICE,
    });
  }
}
