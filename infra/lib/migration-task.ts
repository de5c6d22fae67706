import { commonSettings } from "@outbox/shared";
import { Stack } from "aws-cdk-lib";
import type * as ec2 from "aws-cdk-lib/aws-ec2";
import * as ecs from "aws-cdk-lib/aws-ecs";
import type * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import { Construct } from "constructs";
import type { DaemonService } from "./daemon-service.js";
import { isPlatformVariable } from "./platform-environment.js";

/** The migration runner inside the relay image (see the Dockerfile and docs/deployment.md). */
export const MIGRATE_COMMAND = ["node", "node_modules/@outbox/shared/dist/db/migrate-cli.js"];

/** What the runner reads besides DATABASE_URL (packages/shared/src/db/migrate-cli.ts). */
const MIGRATE_ENV_NAMES: ReadonlySet<string> = new Set(
  [
    commonSettings.dbSslMode,
    commonSettings.dbSslCaFile,
    commonSettings.dbStatementTimeoutMs,
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
    this.taskDefinition = new ecs.FargateTaskDefinition(this, "Task", {
      cpu: 256,
      memoryLimitMiB: 512,
      runtimePlatform: {
        cpuArchitecture: ecs.CpuArchitecture.X86_64,
        operatingSystemFamily: ecs.OperatingSystemFamily.LINUX,
      },
    });
    // The relay's values, so the runner connects with the same TLS settings, and the platform's
    // variables (an extra CA, telemetry).
    const environment = Object.fromEntries(
      Object.entries(relay.environment).filter(
        ([name]) => MIGRATE_ENV_NAMES.has(name) || isPlatformVariable(name),
      ),
    );
    this.container = this.taskDefinition.addContainer("migrate", {
      containerName: "migrate",
      image: props.image,
      command: MIGRATE_COMMAND,
      essential: true,
      environment,
      secrets: {
        DATABASE_URL: ecs.Secret.fromSecretsManager(props.databaseUrlSecret, props.databaseUrlSecretField),
      },
      linuxParameters: new ecs.LinuxParameters(this, "Linux", { initProcessEnabled: true }),
      readonlyRootFilesystem: true,
      logging: ecs.LogDrivers.awsLogs({
        logGroup: relay.logGroup,
        streamPrefix: "migrate",
        // A one-off whose output is its result: every line, `migrations up to date` last, even if a
        // throttle slows it down. Nothing else runs in the task to be stalled.
        mode: ecs.AwsLogDriverMode.BLOCKING,
      }),
    });

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
