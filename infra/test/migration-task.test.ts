import type { CfnElement } from "aws-cdk-lib";
import type { Template } from "aws-cdk-lib/assertions";
import type { IConstruct } from "constructs";
import { describe, expect, it } from "vitest";
import type { DaemonService } from "../lib/daemon-service.js";
import { API_IMAGE_MIGRATE_COMMAND, RELAY_IMAGE_MIGRATE_COMMAND } from "../lib/migration-task.js";
import { container, environmentOf, stringsIn, synth } from "./support/synth.js";

const { stack, template } = synth();

const id = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
const { migration, relay } = stack;
const migrate = container(template, "migrate");
const relayContainer = container(template, "relay");

/** The pieces of the `MigrateCommand` output, joined with "". */
function runTaskPieces(of: Template): unknown[] {
  const { MigrateCommand: output } = of.findOutputs("MigrateCommand");
  if (!output) throw new Error("no MigrateCommand output");
  const [separator, pieces] = output.Value["Fn::Join"] as [string, unknown[]];
  expect(separator).toBe("");
  return pieces;
}

describe("the migration task without the photo service", () => {
  it("runs the relay image's migration runner (the outbox's set) with DATABASE_URL from the same secret", () => {
    expect(RELAY_IMAGE_MIGRATE_COMMAND).toEqual([
      "node",
      "node_modules/@outbox/shared/dist/db/migrate-cli.js",
    ]);
    expect(migrate.Command).toEqual(RELAY_IMAGE_MIGRATE_COMMAND);
    expect(migrate.Image).toEqual(relayContainer.Image);
    expect(migrate.Secrets).toEqual(relayContainer.Secrets);
    expect(migrate.LinuxParameters).toMatchObject({ InitProcessEnabled: true });
    expect(migrate.ReadonlyRootFilesystem).toBe(true);
    const definition = template.findResources("AWS::ECS::TaskDefinition")[id(migration.taskDefinition)];
    expect(definition?.Properties.ContainerDefinitions).toHaveLength(1);
  });

  it("logs every line into the relay's log group, under its own prefix", () => {
    expect(migrate.LogConfiguration).toMatchObject({
      LogDriver: "awslogs",
      Options: {
        "awslogs-group": { Ref: id(relay.logGroup) },
        "awslogs-stream-prefix": "migrate",
        mode: "blocking",
      },
    });
  });

  it("connects with the relay's database settings and nothing of the relay's own", () => {
    // The stack's own DB_SSL_MODE, a database setting: the migration connects as the relay does.
    expect(environmentOf(migrate)).toEqual({ DB_SSL_MODE: "verify-full" });
    const tls = synth({
      relay: {
        environment: {
          DB_SSL_MODE: "verify-full",
          DB_STATEMENT_TIMEOUT_MS: "4000",
          RELAY_BATCH_SIZE: "50",
          NODE_EXTRA_CA_CERTS: "/etc/ssl/certs/proxy.pem",
        },
      },
    }).template;
    expect(environmentOf(container(tls, "migrate"))).toEqual({
      DB_SSL_MODE: "verify-full",
      DB_STATEMENT_TIMEOUT_MS: "4000",
      NODE_EXTRA_CA_CERTS: "/etc/ssl/certs/proxy.pem",
    });
  });

  it("passes on every database setting the migrate commands read, and the log level", () => {
    const tuned = synth({
      relay: {
        environment: {
          DB_SSL_MODE: "verify-full",
          DB_SSL_CA_FILE: "/etc/ssl/certs/rds.pem",
          DB_STATEMENT_TIMEOUT_MS: "4000",
          DB_CONNECT_TIMEOUT_MS: "3000",
          DB_PREPARED_STATEMENTS: "false",
          DB_POOL_MAX: "4",
          LOG_LEVEL: "debug",
        },
      },
    }).template;
    // DB_POOL_MAX is the daemon's: a migration opens one connection.
    expect(environmentOf(container(tuned, "migrate"))).toEqual({
      DB_SSL_MODE: "verify-full",
      DB_SSL_CA_FILE: "/etc/ssl/certs/rds.pem",
      DB_STATEMENT_TIMEOUT_MS: "4000",
      DB_CONNECT_TIMEOUT_MS: "3000",
      DB_PREPARED_STATEMENTS: "false",
      LOG_LEVEL: "debug",
    });
  });

  it("has a task role without any permission: the runner only talks to Postgres", () => {
    const taskRole = id(migration.taskDefinition.taskRole);
    const policies = Object.values(template.findResources("AWS::IAM::Policy")).filter((policy) =>
      JSON.stringify(policy.Properties.Roles).includes(`"${taskRole}"`),
    );
    expect(policies).toEqual([]);
  });

  it("is started by the command in the outputs: this cluster and task definition, the relay's network", () => {
    const pieces = runTaskPieces(template);
    const subnets = relay.service.cluster.vpc.privateSubnets.map((subnet) => ({ Ref: id(subnet) }));
    const securityGroups = relay.service.connections.securityGroups;
    expect(securityGroups).toHaveLength(1);
    expect(pieces).toEqual([
      "aws ecs run-task --region ",
      { Ref: "AWS::Region" },
      " --cluster ",
      { Ref: id(relay.service.cluster) },
      " --task-definition ",
      { Ref: id(migration.taskDefinition) },
      ' --launch-type FARGATE --network-configuration "awsvpcConfiguration={subnets=[',
      subnets[0],
      ",",
      subnets[1],
      "],securityGroups=[",
      { "Fn::GetAtt": [id(securityGroups[0] as IConstruct), "GroupId"] },
      '],assignPublicIp=DISABLED}" --query "tasks[0].taskArn" --output text',
    ]);
    expect(
      stringsIn(template.findOutputs("MigrationTaskDefinitionArn").MigrationTaskDefinitionArn),
    ).toContain(id(migration.taskDefinition));
  });
});

describe("the migration task with the photo service", () => {
  const equipmentUrl = "http://equipment.internal:8080";
  const withApi = synth({
    api: { equipmentUrl, environment: { DB_SSL_MODE: "verify-full", API_RECONCILE_BATCH_SIZE: "200" } },
    relay: { environment: { DB_STATEMENT_TIMEOUT_MS: "4000" } },
  });
  const api = withApi.stack.api;
  if (!api) throw new Error("the photo service must be deployed");
  const apiMigrate = container(withApi.template, "migrate");
  const apiContainer = container(withApi.template, "api");
  const withApiId = (construct: IConstruct) =>
    withApi.stack.getLogicalId(construct.node.defaultChild as CfnElement);

  it("runs the api image's `api migrate` (the outbox's set, then the photo service's): the service refuses to start without both", () => {
    expect(API_IMAGE_MIGRATE_COMMAND).toEqual(["node", "dist/main.js", "migrate"]);
    expect(apiMigrate.Command).toEqual(API_IMAGE_MIGRATE_COMMAND);
    expect(apiMigrate.Image).toEqual(apiContainer.Image);
    expect(apiMigrate.Image).not.toEqual(container(withApi.template, "relay").Image);
    expect(apiMigrate.Secrets).toEqual(apiContainer.Secrets);
    expect(apiMigrate.LinuxParameters).toMatchObject({ InitProcessEnabled: true });
    expect(apiMigrate.ReadonlyRootFilesystem).toBe(true);
  });

  it("connects with the service's database settings, logs into its log group and starts in its network", () => {
    expect(environmentOf(apiMigrate)).toEqual({ DB_SSL_MODE: "verify-full" });
    expect(apiMigrate.LogConfiguration).toMatchObject({
      Options: {
        "awslogs-group": { Ref: withApiId(api.logGroup) },
        "awslogs-stream-prefix": "migrate",
        mode: "blocking",
      },
    });
    const pieces = runTaskPieces(withApi.template);
    const groupIdOf = (service: DaemonService) => {
      const [group, ...others] = service.service.connections.securityGroups;
      expect(others).toEqual([]);
      return { "Fn::GetAtt": [withApiId(group as IConstruct), "GroupId"] };
    };
    expect(pieces).toContainEqual(groupIdOf(api));
    expect(pieces).not.toContainEqual(groupIdOf(withApi.stack.relay));
  });

  it("keeps the task's logical ids: adding the photo service changes what runs, not what is replaced", () => {
    const { migration: migrationWithApi } = withApi.stack;
    expect(withApiId(migrationWithApi.taskDefinition)).toBe(id(migration.taskDefinition));
    expect(withApiId(migrationWithApi.taskDefinition.taskRole)).toBe(id(migration.taskDefinition.taskRole));
  });
});

describe("the first deployment (startServices false)", () => {
  const first = synth({ startServices: false, api: { equipmentUrl: "http://equipment.internal:8080" } });

  it("creates every service without a task, so nothing needs the schema before the migration ran", () => {
    const services = Object.values(first.template.findResources("AWS::ECS::Service"));
    expect(services).toHaveLength(3);
    for (const service of services) expect(service.Properties.DesiredCount).toBe(0);
    // Nothing that would start tasks on its own: no scaling target (its minimum would), no schedule.
    expect(first.template.findResources("AWS::ApplicationAutoScaling::ScalableTarget")).toEqual({});
    expect(first.template.findResources("AWS::Scheduler::Schedule")).toEqual({});
    expect(first.template.findOutputs("MigrateCommand")).not.toEqual({});
  });

  it("keeps everything else as the started stack has it, so the next deployment only starts tasks", () => {
    const started = synth({ api: { equipmentUrl: "http://equipment.internal:8080" } });
    const ids = (of: typeof started) => new Set(Object.keys(of.template.toJSON().Resources));
    const inFirst = ids(first);
    const inStarted = ids(started);
    expect([...inFirst].filter((logicalId) => !inStarted.has(logicalId))).toEqual([]);
    // What the started stack adds: the consumer's scaling, the reconcile schedule with its task and role.
    for (const logicalId of [...inStarted].filter((each) => !inFirst.has(each))) {
      expect(logicalId).toMatch(/^(ConsumerServiceTaskCountTarget|ApiReconcile|SchedulerRoleForTarget)/);
    }
    for (const service of Object.values(started.template.findResources("AWS::ECS::Service"))) {
      expect(service.Properties.DesiredCount).toBeGreaterThan(0);
    }
  });
});
