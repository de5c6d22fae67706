import { migrateSettings } from "@outbox/shared";
import { Stack } from "aws-cdk-lib";
import type * as ec2 from "aws-cdk-lib/aws-ec2";
import type * as ecs from "aws-cdk-lib/aws-ecs";
import type * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import { Construct } from "constructs";
import type { DaemonService } from "./daemon-service.js";
import { addOneOffTask } from "./one-off-task.js";

/** The relay image's runner: the outbox's migrations, all the relay and the consumer need. */
export const RELAY_IMAGE_MIGRATE_COMMAND = ["node", "node_modules/@outbox/shared/dist/db/migrate-cli.js"];

/**
 * The api image's `api migrate`: the outbox's migrations, then the photo service's own
 * (apps/api/src/db/migrate.ts). The service and `api reconcile` refuse to start without the latter.
 */
export const API_IMAGE_MIGRATE_COMMAND = ["node", "dist/main.js", "migrate"];

/**
 * What both commands read (`migrateSettings`, @outbox/shared; DATABASE_URL comes from the secret). Taken
 * from the commands' own list, so a setting they gain reaches the task.
 */
const MIGRATE_ENV_NAMES: ReadonlySet<string> = new Set(Object.values(migrateSettings).map((s) => s.env));

/** Which image runs the migration, and as which service's task. */
export interface MigrationRunner {
  /** Its cluster, subnets, security group, log group and database settings are reused. */
  readonly service: DaemonService;
  /** That service's image, which contains `command`. */
  readonly image: ecs.ContainerImage;
  readonly command: readonly string[];
}

/**
 * The runner that applies every set the deployed services check for: with the photo service its own
 * `api migrate` (the outbox's set and its own), else the relay image's runner (the outbox's set).
 */
export function migrationRunner(
  relay: { readonly service: DaemonService; readonly image: ecs.ContainerImage },
  api: { readonly service: DaemonService; readonly image: ecs.ContainerImage } | undefined,
): MigrationRunner {
  return api
    ? { ...api, command: API_IMAGE_MIGRATE_COMMAND }
    : { ...relay, command: RELAY_IMAGE_MIGRATE_COMMAND };
}

export interface MigrationTaskProps {
  readonly runner: MigrationRunner;
  readonly databaseUrlSecret: secretsmanager.ISecret;
  readonly databaseUrlSecretField?: string;
  readonly vpcSubnets: ec2.SubnetSelection;
}

/**
 * The schema migration as a one-off Fargate task, run by hand (or by CI) before the services start
 * and before each deployment of a new version. It connects exactly as its runner's service does: that
 * service's security group (one let into the database), subnets, TLS settings and secret. Its task
 * role has no permission at all: the runner talks to Postgres only.
 */
export class MigrationTask extends Construct {
  readonly taskDefinition: ecs.FargateTaskDefinition;
  readonly container: ecs.ContainerDefinition;
  /** The service whose image and network the task uses (the relay, or the photo service). */
  readonly service: DaemonService;
  /** `aws ecs run-task …` with this stack's cluster, task definition and network filled in. */
  readonly runTaskCommand: string;

  constructor(scope: Construct, id: string, props: MigrationTaskProps) {
    super(scope, id);
    const { service, image, command } = props.runner;
    this.service = service;
    ({ taskDefinition: this.taskDefinition, container: this.container } = addOneOffTask(this, {
      service,
      image,
      containerName: "migrate",
      command: [...command],
      reads: MIGRATE_ENV_NAMES,
      databaseUrlSecret: props.databaseUrlSecret,
      ...(props.databaseUrlSecretField ? { databaseUrlSecretField: props.databaseUrlSecretField } : {}),
    }));

    const { cluster } = service.service;
    const subnets = cluster.vpc.selectSubnets(props.vpcSubnets).subnetIds.join(",");
    const securityGroups = service.service.connections.securityGroups
      .map((group) => group.securityGroupId)
      .join(",");
    this.runTaskCommand = [
      "aws ecs run-task",
      `--region ${Stack.of(this).region}`,
      `--cluster ${cluster.clusterName}`,
      `--task-definition ${this.taskDefinition.taskDefinitionArn}`,
      "--launch-type FARGATE",
      `--network-configuration "awsvpcConfiguration={subnets=[${subnets}],securityGroups=[${securityGroups}],assignPublicIp=DISABLED}"`,
      `--query "tasks[0].taskArn" --output text`,
    ].join(" ");
  }
}
