import type { CfnElement } from "aws-cdk-lib";
import type { IConstruct } from "constructs";
import { describe, expect, it } from "vitest";
import { DLQ_RETENTION_SECONDS } from "../lib/budget.js";
import { stackPropsFromContext } from "../lib/stack-context.js";
import { synth } from "./support/synth.js";

const { stack, template } = synth();
const id = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
const { topic, queue, deadLetterQueue, subscriptionDeadLetterQueue } = stack.messaging;
const queues = { queue, deadLetterQueue, subscriptionDeadLetterQueue };

interface Statement {
  Effect: string;
  Action: unknown;
  Principal: unknown;
  Resource: unknown;
  Condition?: unknown;
}

function queuePolicyStatements(queueId: string): Statement[] {
  const policies = Object.values(
    template.findResources("AWS::SQS::QueuePolicy", { Properties: { Queues: [{ Ref: queueId }] } }),
  );
  return policies.flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

describe("the queues", () => {
  it("outlive the stack: the queue and both DLQs are retained on deletion and on replacement", () => {
    const resources = template.findResources("AWS::SQS::Queue");
    expect(Object.keys(resources).sort()).toEqual(Object.values(queues).map(id).sort());
    for (const resource of Object.values(resources)) {
      expect(resource).toMatchObject({ DeletionPolicy: "Retain", UpdateReplacePolicy: "Retain" });
    }
  });
});

describe("the subscription", () => {
  it("has a DLQ of its own, which keeps what SNS could not deliver as long as SQS allows", () => {
    template.hasResourceProperties("AWS::SNS::Subscription", {
      Protocol: "sqs",
      Endpoint: { "Fn::GetAtt": [id(queue), "Arn"] },
      RedrivePolicy: { deadLetterTargetArn: { "Fn::GetAtt": [id(subscriptionDeadLetterQueue), "Arn"] } },
    });
    const dlq = template.findResources("AWS::SQS::Queue")[id(subscriptionDeadLetterQueue)];
    expect(dlq?.Properties).toMatchObject({
      MessageRetentionPeriod: DLQ_RETENTION_SECONDS,
      SqsManagedSseEnabled: true,
    });
    // A FIFO topic can only dead-letter into a FIFO queue.
    const fifo = synth({ fifo: true });
    const fifoDlq =
      fifo.template.findResources("AWS::SQS::Queue")[
        fifo.stack.getLogicalId(
          fifo.stack.messaging.subscriptionDeadLetterQueue.node.defaultChild as CfnElement,
        )
      ];
    expect(fifoDlq?.Properties.FifoQueue).toBe(true);
  });

  it("lets SNS send to that DLQ, for this topic only", () => {
    const allows = queuePolicyStatements(id(subscriptionDeadLetterQueue)).filter(
      (statement) => statement.Effect === "Allow",
    );
    expect(allows).toEqual([
      {
        Effect: "Allow",
        Action: "sqs:SendMessage",
        Principal: { Service: "sns.amazonaws.com" },
        Resource: { "Fn::GetAtt": [id(subscriptionDeadLetterQueue), "Arn"] },
        Condition: { ArnEquals: { "aws:SourceArn": { Ref: id(topic) } } },
      },
    ]);
  });
});

describe("TLS", () => {
  const withoutTls = { Bool: { "aws:SecureTransport": "false" } };

  it("is the only way to every queue", () => {
    for (const each of Object.values(queues)) {
      expect(queuePolicyStatements(id(each))).toContainEqual({
        Effect: "Deny",
        Action: "sqs:*",
        Principal: { AWS: "*" },
        Resource: { "Fn::GetAtt": [id(each), "Arn"] },
        Condition: withoutTls,
      });
    }
  });

  it("is the only way to publish to the topic", () => {
    template.hasResourceProperties("AWS::SNS::TopicPolicy", {
      Topics: [{ Ref: id(topic) }],
      PolicyDocument: {
        Statement: [
          {
            Sid: "AllowPublishThroughSSLOnly",
            Effect: "Deny",
            Action: "sns:Publish",
            Principal: "*",
            Resource: { Ref: id(topic) },
            Condition: withoutTls,
          },
        ],
      },
    });
  });
});

describe("the topic's MaximumMessageSize", () => {
  /** The MaximumMessageSize of every SNS topic in the stack, by logical id. */
  const sizes = (synthesized: ReturnType<typeof synth>) =>
    Object.fromEntries(
      Object.entries(synthesized.template.findResources("AWS::SNS::Topic")).map(([logicalId, resource]) => [
        logicalId,
        (resource.Properties as Record<string, unknown> | undefined)?.MaximumMessageSize,
      ]),
    );
  const relayTopicId = (synthesized: ReturnType<typeof synth>) =>
    synthesized.stack.getLogicalId(synthesized.stack.messaging.topic.node.defaultChild as CfnElement);

  it("is left to SNS's default (262 144) unless set", () => {
    expect(Object.values(sizes(synth())).every((size) => size === undefined)).toBe(true);
  });

  it("is set on the relay's topic, and on no other (the alarm topic), from the prop or -c maximumMessageSize", () => {
    const fromProp = synth({ maximumMessageSize: 1_048_576 });
    const fromContext = synth(stackPropsFromContext((key) => ({ maximumMessageSize: "1048576" })[key]));
    for (const synthesized of [fromProp, fromContext]) {
      const all = sizes(synthesized);
      expect(all[relayTopicId(synthesized)]).toBe(1_048_576);
      const others = Object.entries(all).filter(([logicalId]) => logicalId !== relayTopicId(synthesized));
      expect(others.every(([, size]) => size === undefined)).toBe(true);
    }
  });

  it("refuses what SNS would, naming the value", () => {
    for (const bad of [1_023, 1_048_577, 2048.5]) {
      expect(() => synth({ maximumMessageSize: bad })).toThrow(
        `maximumMessageSize must be an integer from 1024 to 1048576 (bytes), got ${bad}`,
      );
    }
    expect(() => stackPropsFromContext((key) => ({ maximumMessageSize: "1MiB" })[key])).toThrow(
      'maximumMessageSize must be a whole number of bytes (1024 to 1048576), got "1MiB"',
    );
  });
});
