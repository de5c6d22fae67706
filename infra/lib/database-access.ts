import { CfnParameter, Stack, Validations } from "aws-cdk-lib";
import * as ec2 from "aws-cdk-lib/aws-ec2";
import * as iam from "aws-cdk-lib/aws-iam";
import * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import type { Construct } from "constructs";
import { DaemonService } from "./daemon-service.js";
import type { MigrationTask } from "./migration-task.js";
import type { OutboxWorkersStackProps } from "./stack-props.js";

/** The secret's ARN, not the secret: nothing to hide (the URL itself never enters the template). */
function databaseUrlSecretParameter(scope: Construct): CfnParameter {
  const parameter = new CfnParameter(scope, "DatabaseUrlSecretArn", {
    type: "String",
    description: "Complete ARN of the Secrets Manager secret whose value is the Postgres URL",
    allowedPattern: "arn:aws[a-z-]*:secretsmanager:.+",
  });
  // CloudFormation's linter takes any parameter named *Secret* for a password (W2509, reported on the stack).
  Validations.of(Stack.of(scope)).acknowledge({
    id: "CloudFormation-Validate::W2509",
    reason: "an ARN, not a password: the URL itself stays in Secrets Manager",
  });
  return parameter;
}

/** The secret holding the Postgres URL: the given ARN, else the DatabaseUrlSecretArn parameter. */
export function databaseUrlSecret(scope: Construct, props: OutboxWorkersStackProps): secretsmanager.ISecret {
  const secretArn = props.databaseUrlSecretArn ?? databaseUrlSecretParameter(scope).valueAsString;
  return secretsmanager.Secret.fromSecretCompleteArn(scope, "DatabaseUrl", secretArn);
}

/** Lets every service in on the database's security group, when the stack is given one. */
export function allowServicesIntoDatabase(
  scope: Construct,
  props: OutboxWorkersStackProps,
  services: readonly Pick<DaemonService, "service" | "container">[],
): void {
  if (!props.databaseSecurityGroupId) return;
  if (!/^sg-[0-9a-f]{8,17}$/.test(props.databaseSecurityGroupId)) {
    throw new Error(
      `databaseSecurityGroupId ${JSON.stringify(props.databaseSecurityGroupId)} is not a security group id (sg-…)`,
    );
  }
  const database = ec2.SecurityGroup.fromSecurityGroupId(
    scope,
    "DatabaseSecurityGroup",
    props.databaseSecurityGroupId,
  );
  const port = ec2.Port.tcp(props.databasePort ?? 5432);
  for (const daemon of services) {
    database.connections.allowFrom(daemon.service, port, `${daemon.container.containerName} → Postgres`);
  }
}

/**
 * Every role that reads the secret may decrypt it, through Secrets Manager only. In the roles' own
 * policies: CDK would grant an imported key's use through the key's policy, which it cannot change,
 * and so grant nothing. (The reconcile task shares the photo service's execution role.)
 */
export function allowSecretKeyDecrypt(
  scope: Construct,
  props: OutboxWorkersStackProps,
  readsTheSecret: readonly (Pick<DaemonService, "taskDefinition"> | MigrationTask | undefined)[],
): void {
  if (!props.databaseUrlSecretKeyArn) return;
  const decrypt = () =>
    new iam.PolicyStatement({
      actions: ["kms:Decrypt"],
      resources: [props.databaseUrlSecretKeyArn as string],
      conditions: {
        StringEquals: { "kms:ViaService": `secretsmanager.${Stack.of(scope).region}.amazonaws.com` },
      },
    });
  for (const reader of readsTheSecret) {
    reader?.taskDefinition.addToExecutionRolePolicy(decrypt());
    // With rotation the daemon itself reads the secret too, with its task role.
    if (props.databaseSecretRotation && reader instanceof DaemonService) {
      reader.taskDefinition.addToTaskRolePolicy(decrypt());
    }
  }
}
