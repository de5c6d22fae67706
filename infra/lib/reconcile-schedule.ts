import { reconcileSettings } from "@outbox/api";
import { Duration } from "aws-cdk-lib";
import type * as ec2 from "aws-cdk-lib/aws-ec2";
import * as ecs from "aws-cdk-lib/aws-ecs";
import * as scheduler from "aws-cdk-lib/aws-scheduler";
import * as targets from "aws-cdk-lib/aws-scheduler-targets";
import type * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import { Construct } from "constructs";
import type { DaemonService } from "./daemon-service.js";
import { isPlatformVariable } from "./platform-environment.js";

/** The variables `node dist/main.js reconcile` reads (apps/api/src/reconcile-once.ts). */
const RECONCILE_ENV_NAMES: ReadonlySet<string> = new Set(Object.values(reconcileSettings).map((s) => s.env));

export interface ReconcileScheduleProps {
  /** The photo service: its cluster, roles, log group, security groups and environment are reused. */
  readonly api: DaemonService;
  /** The service's image (the Dockerfile's `api` target). */
  readonly image: ecs.ContainerImage;
  readonly databaseUrlSecret: secretsmanager.ISecret;
  readonly databaseUrlSecretField?: string;
  /** The service's subnets. Default: the private subnets with egress. */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /** How often a task runs. Default 5 minutes. */
  readonly every?: Duration;
}

/**
 * The gear link reconciliation job as a scheduled Fargate task: EventBridge Scheduler runs
 * `node dist/main.js reconcile` from the service's image on a rate. The task uses the service's task
 * and execution roles, log group, security groups and subnets, so it reaches exactly what the service
 * reaches; the schedule's role may run this task definition and pass those two roles, nothing else.
 */
export class ReconcileSchedule extends Construct {
  readonly taskDefinition: ecs.FargateTaskDefinition;
  readonly container: ecs.ContainerDefinition;
  readonly schedule: scheduler.Schedule;

  constructor(scope: Construct, id: string, props: ReconcileScheduleProps) {
    super(scope, id);
    const { api } = props;
    const every = props.every ?? Duration.minutes(5);

    this.taskDefinition = new ecs.FargateTaskDefinition(this, "Task", {
      cpu: 256,
      memoryLimitMiB: 512,
      runtimePlatform: {
        cpuArchitecture: ecs.CpuArchitecture.X86_64,
        operatingSystemFamily: ecs.OperatingSystemFamily.LINUX,
      },
      taskRole: api.taskRole,
      executionRole: api.taskDefinition.obtainExecutionRole(),
    });
    // The service's values for what the command reads: the two never disagree on the equipment
    // service, its timeout or the backoff, and the service's start-up check has already passed them.
    // The platform's variables too: the command calls the same equipment service (NODE_EXTRA_CA_CERTS)
    // and reports to the same telemetry (OTEL_*).
    const environment = Object.fromEntries(
      Object.entries(api.environment).filter(
        ([name]) => RECONCILE_ENV_NAMES.has(name) || isPlatformVariable(name),
      ),
    );
    this.container = this.taskDefinition.addContainer("reconcile", {
      containerName: "reconcile",
      image: props.image,
      // The image's CMD is ["node", "dist/main.js"] (the service); the subcommand makes it one pass.
      command: ["node", "dist/main.js", "reconcile"],
      essential: true,
      environment,
      secrets: {
        DATABASE_URL: ecs.Secret.fromSecretsManager(props.databaseUrlSecret, props.databaseUrlSecretField),
      },
      // tini as PID 1: node as PID 1 would ignore the SIGTERM of a stop and wait for the SIGKILL.
      linuxParameters: new ecs.LinuxParameters(this, "Linux", { initProcessEnabled: true }),
      readonlyRootFilesystem: true,
      logging: ecs.LogDrivers.awsLogs({
        logGroup: api.logGroup,
        streamPrefix: "reconcile",
        // The last line, `reconciliation done` with its totals, is written just before the exit.
        mode: ecs.AwsLogDriverMode.BLOCKING,
      }),
    });

    this.schedule = new scheduler.Schedule(this, "Schedule", {
      description: "One pass of the photo service's gear link reconciliation (api reconcile)",
      schedule: scheduler.ScheduleExpression.rate(every),
      target: new targets.EcsRunFargateTask(api.service.cluster, {
        taskDefinition: this.taskDefinition,
        ...(props.vpcSubnets ? { vpcSubnets: props.vpcSubnets } : {}),
        securityGroups: api.service.connections.securityGroups,
        assignPublicIp: false,
        // A run the scheduler could not start is not worth more than the next one: no retries past it.
        maxEventAge: Duration.seconds(Math.min(every.toSeconds(), Duration.days(1).toSeconds())),
      }),
    });
  }
}
