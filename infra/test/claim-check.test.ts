import type { CfnElement } from "aws-cdk-lib";
import { Match } from "aws-cdk-lib/assertions";
import type { IConstruct } from "constructs";
import { describe, expect, it } from "vitest";
import { container, environmentOf, policyStatements, synth, wildcardProblems } from "./support/synth.js";

const { stack, template } = synth();
const id = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
const bucket = id(stack.claimCheck.bucket);
const objects = { "Fn::Join": ["", [{ "Fn::GetAtt": [bucket, "Arn"] }, "/*"]] };

/** Statements of the policies attached to the role with this logical id, or to this imported role's name. */
function statementsOf(role: string): Record<string, unknown>[] {
  return Object.values(template.findResources("AWS::IAM::Policy"))
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(role))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement);
}

const s3Statements = (statements: Record<string, unknown>[]) =>
  statements.filter((statement) => JSON.stringify(statement.Action).includes("s3:"));

describe("the claim check's bucket", () => {
  it("is private, encrypted, TLS only, and retained with the queues", () => {
    const resources = template.findResources("AWS::S3::Bucket");
    expect(Object.keys(resources)).toEqual([bucket]);
    expect(resources[bucket]).toMatchObject({ DeletionPolicy: "Retain", UpdateReplacePolicy: "Retain" });
    template.hasResourceProperties("AWS::S3::Bucket", {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }],
      },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      OwnershipControls: { Rules: [{ ObjectOwnership: "BucketOwnerEnforced" }] },
    });
    template.hasResourceProperties("AWS::S3::BucketPolicy", {
      Bucket: { Ref: bucket },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: "Deny",
            Action: "s3:*",
            Condition: { Bool: { "aws:SecureTransport": "false" } },
          }),
        ]),
      },
    });
  });

  it("expires objects only once no pointer can reach a consumer: the relay's send window, then the queue and the DLQ twice (one redrive), plus a day", () => {
    const { queueRetentionSeconds, dlqRetentionSeconds } = stack.consumerBudget;
    const sendWithinHours = Number(
      environmentOf(container(template, "relay")).RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS,
    );
    expect(sendWithinHours).toBe(192);
    // 8 days to send, 4 in the queue, 14 in the DLQ, again after a redrive, and a day: 45.
    const days =
      Math.ceil((sendWithinHours * 3_600 + 2 * (queueRetentionSeconds + dlqRetentionSeconds)) / 86_400) + 1;
    expect(days).toBe(45);
    expect(stack.claimCheck.expirationDays).toBe(days);
    template.hasResourceProperties("AWS::S3::Bucket", {
      LifecycleConfiguration: {
        Rules: [
          {
            Id: "expire-claimed-payloads",
            Status: "Enabled",
            ExpirationInDays: days,
            AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
          },
        ],
      },
    });
    // The relay's window is the operator's to change; the lifecycle follows it.
    const wider = synth({ relay: { environment: { RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS: "336" } } });
    expect(wider.stack.claimCheck.expirationDays).toBe(51);
  });

  it("refuses at synth a lifecycle shorter than the longest a pointer can live", () => {
    expect(() => synth({ claimCheckExpirationDays: 30 })).toThrow(
      "claimCheckExpirationDays (30) is shorter than the longest a pointer can live: RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS (192 h) + the queue's and the DLQ's retention twice (one redrive) = 45 days; a consumer would find objects gone",
    );
    expect(synth({ claimCheckExpirationDays: 60 }).stack.claimCheck.expirationDays).toBe(60);
  });

  it("tells the consumer its name (CONSUMER_CLAIM_CHECK_BUCKET) and outputs it for the applications", () => {
    expect(environmentOf(container(template, "consumer")).CONSUMER_CLAIM_CHECK_BUCKET).toEqual({
      Ref: bucket,
    });
    template.hasOutput("ClaimCheckBucketName", { Value: { Ref: bucket } });
  });
});

describe("who may touch it", () => {
  it("lets the consumer get objects and list the bucket (a missing object reads as 404, not 403), nothing more", () => {
    expect(s3Statements(statementsOf(id(stack.consumer.taskRole)))).toEqual([
      { Effect: "Allow", Action: "s3:GetObject", Resource: objects },
      { Effect: "Allow", Action: "s3:ListBucket", Resource: { "Fn::GetAtt": [bucket, "Arn"] } },
    ]);
  });

  it("lets only the consumer and the relay read it (the relay's republish looks for objects); the photo service sends small events", () => {
    const withApi = synth({ api: { equipmentUrl: "http://equipment.internal:8080" } });
    const roleOf = (role: { node: { defaultChild?: unknown } }) =>
      withApi.stack.getLogicalId(role.node.defaultChild as CfnElement);
    const onS3 = Object.values(withApi.template.findResources("AWS::IAM::Policy")).filter((policy) =>
      JSON.stringify(policy.Properties.PolicyDocument.Statement).includes('"s3:'),
    );
    const roles = onS3.flatMap((policy) =>
      (policy.Properties.Roles as { Ref: string }[]).map((role) => role.Ref),
    );
    expect(roles.sort()).toEqual(
      [roleOf(withApi.stack.consumer.taskRole), roleOf(withApi.stack.relay.taskRole)].sort(),
    );
    for (const policy of onS3) {
      const s3Actions = JSON.stringify(policy.Properties.PolicyDocument.Statement).match(/"s3:\w+"/g);
      expect(new Set(s3Actions)).toEqual(new Set(['"s3:GetObject"', '"s3:ListBucket"']));
    }
    // Nor a role policy, nor a bucket policy that allows anything.
    const allowedByBucketPolicy = policyStatements(withApi.template).filter(
      ({ where, statement }) => where.startsWith("ClaimCheckBucketPolicy") && statement.Effect === "Allow",
    );
    expect(allowedByBucketPolicy).toEqual([]);
  });

  it("gives each role in claimCheckWriterRoleArns PutObject on the objects only", () => {
    const writer = "arn:aws:iam::123456789012:role/orders-app";
    const withWriter = synth({ claimCheckWriterRoleArns: [writer] });
    const writerBucket = withWriter.stack.getLogicalId(
      withWriter.stack.claimCheck.bucket.node.defaultChild as CfnElement,
    );
    const policies = Object.values(withWriter.template.findResources("AWS::IAM::Policy")).filter((policy) =>
      JSON.stringify(policy.Properties.Roles).includes("orders-app"),
    );
    expect(policies.flatMap((policy) => policy.Properties.PolicyDocument.Statement)).toEqual([
      {
        Effect: "Allow",
        Action: "s3:PutObject",
        Resource: { "Fn::Join": ["", [{ "Fn::GetAtt": [writerBucket, "Arn"] }, "/*"]] },
      },
    ]);
    expect(wildcardProblems(withWriter.template)).toEqual([]);
  });
});
