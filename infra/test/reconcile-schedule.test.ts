import type { CfnElement } from "aws-cdk-lib";
import { Duration } from "aws-cdk-lib";
import type { IConstruct } from "constructs";
import { describe, expect, it } from "vitest";
import { container, environmentOf, synth, wildcardProblems } from "./support/synth.js";

const equipmentUrl = "http://equipment.internal:8080";
const { stack, template } = synth({ api: { equipmentUrl } });
const id = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);

const api = stack.api;
const reconcile = stack.apiReconcile;
if (!api || !reconcile) throw new Error("the api and its reconcile schedule must be deployed");
const executionRole = api.taskDefinition.executionRole;
if (!executionRole) throw new Error("the api task has no execution role");

interface ScheduleTarget {
  Arn: unknown;
  RoleArn: { "Fn::GetAtt": [string, "Arn"] };
  EcsParameters: {
    TaskDefinitionArn: unknown;
    LaunchType?: string;
    NetworkConfiguration: {
      AwsvpcConfiguration: { Subnets: unknown[]; SecurityGroups?: unknown[]; AssignPublicIp: string };
    };
  };
}

function theSchedule(of = template): { ScheduleExpression: string; State: string; Target: ScheduleTarget } {
  const schedules = Object.values(of.findResources("AWS::Scheduler::Schedule"));
  expect(schedules).toHaveLength(1);
  return schedules[0]?.Properties;
}

const schedule = theSchedule();
const target = schedule.Target;
const reconcileContainer = container(template, "reconcile");
const apiContainer = container(template, "api");

describe("reconcile schedule", () => {
  it("runs every 5 minutes by default, and at the rate the props set", () => {
    expect(schedule.ScheduleExpression).toBe("rate(5 minutes)");
    expect(schedule.State).toBe("ENABLED");
    const every15 = synth({ api: { equipmentUrl, reconcileEvery: Duration.minutes(15) } }).template;
    expect(theSchedule(every15).ScheduleExpression).toBe("rate(15 minutes)");
  });

  it("runs a task of its own that starts the service's image with `reconcile`", () => {
    expect(target.Arn).toEqual({ "Fn::GetAtt": [id(api.service.cluster), "Arn"] });
    expect(target.EcsParameters.TaskDefinitionArn).toEqual({ Ref: id(reconcile.taskDefinition) });
    const definition = template.findResources("AWS::ECS::TaskDefinition")[id(reconcile.taskDefinition)];
    expect(definition?.Properties.ContainerDefinitions).toEqual([
      expect.objectContaining({ Name: "reconcile" }),
    ]);
    expect(reconcileContainer.Command).toEqual(["node", "dist/main.js", "reconcile"]);
    expect(reconcileContainer.Image).toEqual(apiContainer.Image);
  });

  it("gets the service's database secret, log group and the variables the command reads, no others", () => {
    expect(reconcileContainer.Secrets).toEqual(apiContainer.Secrets);
    expect(environmentOf(reconcileContainer)).toEqual({
      API_EQUIPMENT_URL: equipmentUrl,
      DB_SSL_MODE: "verify-full",
    });
    const logOptions = (definition: typeof apiContainer) =>
      (definition.LogConfiguration as { Options: Record<string, unknown> }).Options;
    expect(logOptions(reconcileContainer)["awslogs-group"]).toEqual(
      logOptions(apiContainer)["awslogs-group"],
    );
    expect(logOptions(reconcileContainer)["awslogs-stream-prefix"]).toBe("reconcile");
    // A variable the operator sets for the service and the command reads reaches the task too.
    const tuned = synth({ api: { equipmentUrl, environment: { API_RECONCILE_BATCH_SIZE: "200" } } }).template;
    expect(environmentOf(container(tuned, "reconcile"))).toEqual({
      API_EQUIPMENT_URL: equipmentUrl,
      API_RECONCILE_BATCH_SIZE: "200",
      DB_SSL_MODE: "verify-full",
    });
  });

  it("runs on Fargate in the private subnets with the service's security group and no public IP", () => {
    expect(target.EcsParameters.LaunchType).toBe("FARGATE");
    const network = target.EcsParameters.NetworkConfiguration.AwsvpcConfiguration;
    const privateSubnets = api.service.cluster.vpc.privateSubnets;
    expect(privateSubnets.length).toBeGreaterThan(0);
    expect(network.Subnets).toEqual(privateSubnets.map((subnet) => ({ Ref: id(subnet) })));
    const securityGroups = api.service.connections.securityGroups;
    expect(securityGroups).toHaveLength(1);
    expect(network.SecurityGroups).toEqual(
      securityGroups.map((group) => ({ "Fn::GetAtt": [id(group), "GroupId"] })),
    );
    expect(network.AssignPublicIp).toBe("DISABLED");
  });

  it("uses the service's roles, and its own role may run that task definition and pass those roles only", () => {
    const definition = template.findResources("AWS::ECS::TaskDefinition")[id(reconcile.taskDefinition)];
    expect(definition?.Properties.TaskRoleArn).toEqual({ "Fn::GetAtt": [id(api.taskRole), "Arn"] });
    expect(definition?.Properties.ExecutionRoleArn).toEqual({ "Fn::GetAtt": [id(executionRole), "Arn"] });

    const roleId = target.RoleArn["Fn::GetAtt"][0];
    const role = template.findResources("AWS::IAM::Role")[roleId];
    expect(role?.Properties.AssumeRolePolicyDocument.Statement).toEqual([
      expect.objectContaining({
        Action: "sts:AssumeRole",
        Principal: { Service: "scheduler.amazonaws.com" },
      }),
    ]);
    expect(role?.Properties.ManagedPolicyArns).toBeUndefined();
    const policies = Object.values(template.findResources("AWS::IAM::Policy")).filter((policy) =>
      JSON.stringify(policy.Properties.Roles).includes(`"${roleId}"`),
    );
    const statements = policies.flatMap((policy) => policy.Properties.PolicyDocument.Statement);
    expect(statements).toHaveLength(2);
    expect(statements).toContainEqual({
      Effect: "Allow",
      Action: "ecs:RunTask",
      Resource: { Ref: id(reconcile.taskDefinition) },
    });
    expect(statements).toContainEqual({
      Effect: "Allow",
      Action: "iam:PassRole",
      Resource: [{ "Fn::GetAtt": [id(api.taskRole), "Arn"] }, { "Fn::GetAtt": [id(executionRole), "Arn"] }],
      Condition: { StringLike: { "iam:PassedToService": "ecs-tasks.amazonaws.com" } },
    });
    expect(wildcardProblems(template)).toEqual([]);
  });

  it("leaves reconciliation to the schedule: the service's own loop is off and cannot be turned on", () => {
    expect(environmentOf(apiContainer).API_RECONCILE_INTERVAL_MS).toBe("0");
    expect(() =>
      synth({ api: { equipmentUrl, environment: { API_RECONCILE_INTERVAL_MS: "30000" } } }),
    ).toThrow(/API_RECONCILE_INTERVAL_MS are derived by the stack/);
  });

  it("is not deployed without the photo service", () => {
    expect(synth().template.findResources("AWS::Scheduler::Schedule")).toEqual({});
  });
});
