import { commonSettings } from "@outbox/shared";
import { Stack } from "aws-cdk-lib";
import type * as ec2 from "aws-cdk-lib/aws-ec2";
import type * as ecs from "aws-cdk-lib/aws-ecs";
import type * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import { Construct } from "constructs";
import type { DaemonService } from "./daemon-service.js";
import { addOneOffTask } from "./one-off-task.js";

/** The migration runner inside the relay image (see the Dockerfile and docs/deployment.md). */
export const MIGRATE_COMMAND = ["node", "node_modules/@outbox/shared/dist/db/migrate-cli.js"];

/** What the runner reads besides DATABASE_URL (packages/shared/src/db/migrate-cli.ts). */
const MIGRATE_ENV_NAMES: ReadonlySet<string> = new Set(
  [
    commonSettings.dbSslMode,
    commonSettings.dbSslCaFile,
    commonSettings.dbStatementTimeoutMs,
    commonSettings.dbConnectTimeoutMs,
    commonSettings.logLevel,
  ].map((setting) => setting.env),
);

export interface MigrationTaskProps {
  /** The relay: its cluster, subnets, security group, log group and database settings are reused. */
  readonly relay: DaemonService;
  /** The relay's image, which contains the runner. */
  readonly image: ecs.ContainerImage;
  readonly databaseUrlSecret: secretsmanager.ISecret;
  readonly databaseUrlSecretField?: string;
  readonly vpcSubnets: ec2.SubnetSelection;
}

/**
 * The schema migration as a one-off Fargate task, run by hand (or by CI) before the services start
 * and before each deployment of a new version. It connects exactly as the relay does: the relay's
 * security group (the one let into the database), subnets, TLS settings and secret. Its task role has
 * no permission at all: the runner talks to Postgres only.
 */
export class MigrationTask extends Construct {
  readonly taskDefinition: ecs.FargateTaskDefinition;
  readonly container: ecs.ContainerDefinition;
  /** `aws ecs run-task …` with this stack's cluster, task definition and network filled in. */
  readonly runTaskCommand: string;

  constructor(scope: Construct, id: string, props: MigrationTaskProps) {
    super(scope, id);
    const { relay } = props;
    ({ taskDefinition: this.taskDefinition, container: this.container } = addOneOffTask(this, {
      service: relay,
      image: props.image,
      containerName: "migrate",
      command: MIGRATE_COMMAND,
      reads: MIGRATE_ENV_NAMES,
      databaseUrlSecret: props.databaseUrlSecret,
      ...(props.databaseUrlSecretField ? { databaseUrlSecretField: props.databaseUrlSecretField } : {}),
    }));

    const { cluster } = relay.service;
    const subnets = cluster.vpc.selectSubnets(props.vpcSubnets).subnetIds.join(",");
    const securityGroups = relay.service.connections.securityGroups
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
