import type { CfnElement } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import type { IConstruct } from "constructs";
import { describe, expect, it } from "vitest";
import { policyStatements, stringsIn, synth, wildcardProblems, XRAY_WRITE_ACTIONS } from "./support/synth.js";

const variants = {
  default: {},
  fifo: { fifo: true },
  "database security group, JSON secret": {
    databaseSecurityGroupId: "sg-0123456789abcdef0",
    databaseUrlSecretArn: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:db-AbCdEf",
    databaseUrlSecretField: "url",
  },
  "private registry with credentials": {
    images: {
      kind: "registry",
      relay: "ghcr.io/acme/outbox-relay:0.2.0",
      consumer: "ghcr.io/acme/outbox-consumer:0.2.0",
      credentialsSecretArn: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:ghcr-AbCdEf",
    },
    alarmEmail: "ops@example.com",
  },
} as const;

/** Statements of the policies attached to one role, keyed by the role's logical id. */
function statementsOfRole(template: ReturnType<typeof synth>["template"], roleId: string) {
  const policies = Object.values(template.findResources("AWS::IAM::Policy")).filter((policy) =>
    JSON.stringify(policy.Properties.Roles).includes(`"${roleId}"`),
  );
  return policies.flatMap(
    (policy) => policy.Properties.PolicyDocument.Statement as { Action: unknown; Resource: unknown }[],
  );
}

describe("least privilege", () => {
  for (const [name, props] of Object.entries(variants)) {
    it(`has no wildcard action or resource in any policy statement (${name})`, () => {
      const { template } = synth(props);
      expect(policyStatements(template).length).toBeGreaterThan(5);
      expect(wildcardProblems(template)).toEqual([]);
      // No managed policies either (their documents are not in the template to check).
      for (const role of Object.values(template.findResources("AWS::IAM::Role"))) {
        expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      }
    });
  }

  it("sees a wildcard when there is one (the check itself works)", () => {
    const { template } = synth({
      images: { kind: "ecr", repositoryName: "outbox", relayTag: "relay-1", consumerTag: "consumer-1" },
    });
    // A private ECR repository is the one documented exception: GetAuthorizationToken exists only on `*`.
    expect(wildcardProblems(template).sort()).toEqual([
      expect.stringMatching(/^ConsumerTaskExecutionRoleDefaultPolicy.*: resource \*$/),
      expect.stringMatching(/^MigrationTaskExecutionRoleDefaultPolicy.*: resource \*$/),
      expect.stringMatching(/^RelayTaskExecutionRoleDefaultPolicy.*: resource \*$/),
    ]);
    const onStar = policyStatements(template).filter(({ statement }) =>
      stringsIn(statement.Resource).includes("*"),
    );
    // Besides the X-Ray writes (allowed, see below): the ECR token only.
    for (const { statement } of onStar) {
      if (
        Array.isArray(statement.Action) &&
        statement.Action.every((action) => String(action).startsWith("xray:"))
      ) {
        expect(statement).toEqual({ Effect: "Allow", Action: XRAY_WRITE_ACTIONS, Resource: "*" });
      } else {
        expect(statement.Action).toBe("ecr:GetAuthorizationToken");
      }
    }
  });

  const { stack, template } = synth();
  const id = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const topic = id(stack.messaging.topic);
  const queue = id(stack.messaging.queue);
  const dlq = id(stack.messaging.deadLetterQueue);

  /** The collector sidecar's statements on a task role: EMF into its own log group, spans to X-Ray. */
  const collectorStatements = (sidecar: RegExp) => [
    expect.objectContaining({
      Action: ["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
      Resource: { "Fn::GetAtt": [expect.stringMatching(sidecar), "Arn"] },
    }),
    { Effect: "Allow", Action: XRAY_WRITE_ACTIONS, Resource: "*" },
  ];

  it("lets the relay publish to its topic, read its attributes, and look for claim-check objects, nothing else (plus its metrics log group)", () => {
    const statements = statementsOfRole(template, id(stack.relay.taskRole));
    expect(statements).toContainEqual(
      expect.objectContaining({ Action: "sns:Publish", Resource: { Ref: topic } }),
    );
    // The topic's MaximumMessageSize: the relay's message size limit.
    expect(statements).toContainEqual(
      expect.objectContaining({ Action: "sns:GetTopicAttributes", Resource: { Ref: topic } }),
    );
    const actions = statements.flatMap((statement) => stringsIn(statement.Action));
    // And the claim check read-only: `relay republish` looks for a replayed pointer's object.
    expect(actions.filter((action) => !action.startsWith("logs:") && !action.startsWith("xray:"))).toEqual([
      "sns:Publish",
      "sns:GetTopicAttributes",
      "s3:GetObject",
      "s3:ListBucket",
    ]);
    const logResources = statements.filter((statement) =>
      stringsIn(statement.Action).some((a) => a.startsWith("logs:")),
    );
    for (const statement of logResources) {
      expect(statement.Resource).toEqual({
        "Fn::GetAtt": [expect.stringMatching(/^RelayMetricsEmfLogs/), "Arn"],
      });
    }
    expect(statements).toEqual([
      ...collectorStatements(/^RelayMetricsEmfLogs/),
      expect.objectContaining({ Action: "sns:Publish" }),
      expect.objectContaining({ Action: "sns:GetTopicAttributes" }),
      expect.objectContaining({ Action: "s3:GetObject" }),
      expect.objectContaining({ Action: "s3:ListBucket" }),
    ]);
  });

  it("lets the consumer receive, delete and extend on its queue, send to its DLQ, and read the claim check only", () => {
    const statements = statementsOfRole(template, id(stack.consumer.taskRole));
    expect(statements).toEqual([
      ...collectorStatements(/^ConsumerMetricsEmfLogs/),
      expect.objectContaining({
        Action: ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"],
        Resource: { "Fn::GetAtt": [queue, "Arn"] },
      }),
      expect.objectContaining({ Action: "sqs:SendMessage", Resource: { "Fn::GetAtt": [dlq, "Arn"] } }),
      // The claim check's payloads (claim-check.test.ts has the details).
      expect.objectContaining({ Action: "s3:GetObject" }),
      expect.objectContaining({ Action: "s3:ListBucket" }),
    ]);
  });

  it("gives the photo service's task role its collector's statements only", () => {
    const withApi = synth({ api: { equipmentUrl: "http://equipment.internal:8080" } });
    const role = withApi.stack.api?.taskRole;
    if (!role) throw new Error("no api");
    const roleId = withApi.stack.getLogicalId(role.node.defaultChild as CfnElement);
    expect(statementsOfRole(withApi.template, roleId)).toEqual(collectorStatements(/^ApiMetricsEmfLogs/));
  });

  it("allows X-Ray's writes on `*` (they have no resource-level permissions) and nothing more there", () => {
    const xray = policyStatements(template).filter(({ statement }) =>
      stringsIn(statement.Action).some((action) => action.startsWith("xray:")),
    );
    // The relay's and the consumer's task roles; a task role's policy holds all of its statements.
    expect(xray.map(({ where }) => where.split(".")[0]).sort()).toEqual([
      expect.stringMatching(/^ConsumerTaskTaskRoleDefaultPolicy/),
      expect.stringMatching(/^RelayTaskTaskRoleDefaultPolicy/),
    ]);
    for (const { statement } of xray) {
      expect(statement).toEqual({ Effect: "Allow", Action: XRAY_WRITE_ACTIONS, Resource: "*" });
    }
    // The exception is that statement exactly: one more action, or a condition, is a wildcard again.
    const widened = Template.fromJSON({
      Resources: {
        Policy: {
          Type: "AWS::IAM::Policy",
          Properties: {
            PolicyDocument: {
              Statement: [
                { Effect: "Allow", Action: [...XRAY_WRITE_ACTIONS, "xray:GetTraceSummaries"], Resource: "*" },
                { Effect: "Allow", Action: "xray:PutTraceSegments", Resource: "*" },
              ],
            },
          },
        },
      },
    });
    expect(wildcardProblems(widened)).toEqual([
      "Policy.Properties.PolicyDocument.Statement[0]: resource *",
      "Policy.Properties.PolicyDocument.Statement[1]: resource *",
    ]);
  });

  it("grants no X-Ray action with traces off, and the metrics' log group statement stays", () => {
    const { stack: off, template: offTemplate } = synth({ telemetry: { traces: false } });
    const actions = policyStatements(offTemplate).flatMap(({ statement }) => stringsIn(statement.Action));
    expect(actions.filter((action) => action.startsWith("xray:"))).toEqual([]);
    const consumerRole = off.getLogicalId(off.consumer.taskRole.node.defaultChild as CfnElement);
    expect(statementsOfRole(offTemplate, consumerRole)[0]).toEqual(
      collectorStatements(/^ConsumerMetricsEmfLogs/)[0],
    );
  });

  it("lets the execution roles read the database secret and write their own log group, nothing more", () => {
    for (const daemon of [stack.relay, stack.consumer]) {
      const role = daemon.taskDefinition.executionRole;
      if (!role) throw new Error("no execution role");
      const statements = statementsOfRole(template, id(role));
      const actions = statements.flatMap((statement) => stringsIn(statement.Action)).sort();
      expect(new Set(actions)).toEqual(
        new Set([
          "logs:CreateLogStream",
          "logs:PutLogEvents",
          "secretsmanager:DescribeSecret",
          "secretsmanager:GetSecretValue",
        ]),
      );
      expect(statements).toContainEqual(
        expect.objectContaining({ Resource: { Ref: "DatabaseUrlSecretArn" } }),
      );
    }
  });

  it("lets the execution roles decrypt with the secret's own KMS key, through Secrets Manager only", () => {
    const kmsActions = (of: typeof template) =>
      policyStatements(of)
        .flatMap(({ statement }) => stringsIn(statement.Action))
        .filter((action) => action.startsWith("kms:"));
    expect(kmsActions(template)).toEqual([]);

    const keyArn = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";
    const withKey = synth({
      databaseUrlSecretKeyArn: keyArn,
      api: { equipmentUrl: "http://equipment.internal:8080" },
    });
    const keyId = (construct: IConstruct) =>
      withKey.stack.getLogicalId(construct.node.defaultChild as CfnElement);
    const tasks = [withKey.stack.relay, withKey.stack.consumer, withKey.stack.api, withKey.stack.migration];
    for (const task of tasks) {
      const role = task?.taskDefinition.executionRole;
      if (!role) throw new Error("no execution role");
      expect(statementsOfRole(withKey.template, keyId(role))).toContainEqual({
        Effect: "Allow",
        Action: "kms:Decrypt",
        Resource: keyArn,
        Condition: {
          StringEquals: {
            "kms:ViaService": {
              "Fn::Join": ["", ["secretsmanager.", { Ref: "AWS::Region" }, ".amazonaws.com"]],
            },
          },
        },
      });
    }
    // Decrypt only, on that key only, and to the execution roles only (the task roles never read the secret).
    expect(kmsActions(withKey.template)).toEqual(tasks.map(() => "kms:Decrypt"));
    expect(wildcardProblems(withKey.template)).toEqual([]);
  });

  it("with databaseSecretRotation, lets each daemon's task role read that secret (and decrypt with its key) and tells the daemon its ARN", () => {
    const keyArn = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab";
    const rotating = synth({
      databaseSecretRotation: true,
      databaseUrlSecretKeyArn: keyArn,
      api: { equipmentUrl: "http://equipment.internal:8080" },
    });
    const daemons = [rotating.stack.relay, rotating.stack.consumer, rotating.stack.api];
    for (const daemon of daemons) {
      if (!daemon) throw new Error("no api");
      const roleId = rotating.stack.getLogicalId(daemon.taskRole.node.defaultChild as CfnElement);
      const statements = statementsOfRole(rotating.template, roleId);
      expect(statements).toContainEqual(
        expect.objectContaining({
          Action: ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"],
          Resource: { Ref: "DatabaseUrlSecretArn" },
        }),
      );
      expect(statements).toContainEqual(expect.objectContaining({ Action: "kms:Decrypt", Resource: keyArn }));
      const container = rotating.template.findResources("AWS::ECS::TaskDefinition");
      const environments = Object.values(container).flatMap((task) =>
        (
          task.Properties.ContainerDefinitions as {
            Name: string;
            Environment?: { Name: string; Value: unknown }[];
          }[]
        )
          .filter((definition) => definition.Name === daemon.container.containerName)
          .flatMap((definition) => definition.Environment ?? []),
      );
      expect(environments).toContainEqual({
        Name: "DATABASE_SECRET_ARN",
        Value: { Ref: "DatabaseUrlSecretArn" },
      });
    }
    // The migration task does not rotate: its task role still never reads the secret.
    const migrationRole = rotating.stack.migration.taskDefinition.taskRole;
    const migrationStatements = statementsOfRole(
      rotating.template,
      rotating.stack.getLogicalId(migrationRole.node.defaultChild as CfnElement),
    );
    expect(migrationStatements.flatMap((statement) => stringsIn(statement.Action))).not.toContain(
      "secretsmanager:GetSecretValue",
    );
    expect(wildcardProblems(rotating.template)).toEqual([]);
  });

  it("refuses databaseSecretRotation with databaseUrlSecretField (the daemon reads the whole secret)", () => {
    expect(() =>
      synth({
        databaseSecretRotation: true,
        databaseUrlSecretArn: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:db-AbCdEf",
        databaseUrlSecretField: "url",
      }),
    ).toThrow(/databaseSecretRotation .* databaseUrlSecretField/);
  });
});
