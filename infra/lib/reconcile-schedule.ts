import { reconcileSettings } from "@outbox/api";
import { Duration } from "aws-cdk-lib";
import type * as ec2 from "aws-cdk-lib/aws-ec2";
import type * as ecs from "aws-cdk-lib/aws-ecs";
import * as scheduler from "aws-cdk-lib/aws-scheduler";
import * as targets from "aws-cdk-lib/aws-scheduler-targets";
import type * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import { Construct } from "constructs";
import type { DaemonService } from "./daemon-service.js";
import { addOneOffTask } from "./one-off-task.js";

/** The variables `node dist/main.js reconcile` reads (apps/api/src/cli/reconcile.ts). */
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

    // The service's task and execution roles: the command reaches exactly what the service reaches.
    ({ taskDefinition: this.taskDefinition, container: this.container } = addOneOffTask(this, {
      service: api,
      image: props.image,
      containerName: "reconcile",
      // The image's CMD is ["node", "dist/main.js"] (the service); the subcommand makes it one pass.
      command: ["node", "dist/main.js", "reconcile"],
      reads: RECONCILE_ENV_NAMES,
      databaseUrlSecret: props.databaseUrlSecret,
      ...(props.databaseUrlSecretField ? { databaseUrlSecretField: props.databaseUrlSecretField } : {}),
      taskRole: api.taskRole,
      executionRole: api.taskDefinition.obtainExecutionRole(),
    }));

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
