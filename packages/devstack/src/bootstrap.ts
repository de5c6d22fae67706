import { CreateTopicCommand, SubscribeCommand } from "@aws-sdk/client-sns";
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { snsClient, sqsClient } from "./aws-clients.js";
import type { AwsEndpoints } from "./local-stack.js";

export interface BootstrapOptions {
  /** Base name; FIFO resources get the mandatory `.fifo` suffix, the DLQ is `<name>-dlq`. */
  name: string;
  fifo?: boolean;
  rawDelivery?: boolean;
  /** Receives before SQS moves a message to the DLQ. Default 5. */
  maxReceiveCount?: number;
  visibilityTimeoutSeconds?: number;
  messageRetentionSeconds?: number;
  /** The topic's `MaximumMessageSize` (1 024–1 048 576 bytes); SNS's default (262 144) when omitted. */
  maximumMessageSize?: number;
}

export interface BootstrappedResources {
  topicArn: string;
  queueUrl: string;
  queueArn: string;
  dlqUrl: string;
  dlqArn: string;
  subscriptionArn: string;
}

async function createQueue(
  sqs: SQSClient,
  name: string,
  attributes: Record<string, string>,
): Promise<{ url: string; arn: string }> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  if (!QueueUrl) throw new Error(`CreateQueue ${name} returned no URL`);
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }),
  );
  if (!Attributes?.QueueArn) throw new Error(`queue ${name} has no QueueArn`);
  return { url: QueueUrl, arn: Attributes.QueueArn };
}

/** Topic → queue (with DLQ) → subscription, through real SDK calls only, so it works on any backend. */
export async function bootstrapResources(
  aws: AwsEndpoints,
  options: BootstrapOptions,
): Promise<BootstrappedResources> {
  const sns = snsClient(aws);
  const sqs = sqsClient(aws);
  try {
    const suffix = options.fifo ? ".fifo" : "";
    const fifoAttributes: Record<string, string> = options.fifo ? { FifoQueue: "true" } : {};
    const retention: Record<string, string> =
      options.messageRetentionSeconds === undefined
        ? {}
        : { MessageRetentionPeriod: String(options.messageRetentionSeconds) };

    const topicAttributes: Record<string, string> = {
      ...(options.fifo ? { FifoTopic: "true" } : {}),
      ...(options.maximumMessageSize === undefined
        ? {}
        : { MaximumMessageSize: String(options.maximumMessageSize) }),
    };
    const { TopicArn: topicArn } = await sns.send(
      new CreateTopicCommand({
        Name: `${options.name}${suffix}`,
        Attributes: Object.keys(topicAttributes).length > 0 ? topicAttributes : undefined,
      }),
    );
    if (!topicArn) throw new Error("CreateTopic returned no TopicArn");

    const dlq = await createQueue(sqs, `${options.name}-dlq${suffix}`, { ...fifoAttributes, ...retention });
    const queue = await createQueue(sqs, `${options.name}${suffix}`, {
      ...fifoAttributes,
      ...retention,
      VisibilityTimeout: String(options.visibilityTimeoutSeconds ?? 30),
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: dlq.arn,
        maxReceiveCount: options.maxReceiveCount ?? 5,
      }),
      // Real SQS only accepts SNS deliveries that a queue policy allows.
      Policy: JSON.stringify({
        Version: "2012-10-17",
        Statement: [
          {
            Effect: "Allow",
            Principal: { Service: "sns.amazonaws.com" },
            Action: "sqs:SendMessage",
            Resource: "*",
            Condition: { ArnEquals: { "aws:SourceArn": topicArn } },
          },
        ],
      }),
    });

    const { SubscriptionArn: subscriptionArn } = await sns.send(
      new SubscribeCommand({
        TopicArn: topicArn,
        Protocol: "sqs",
        Endpoint: queue.arn,
        Attributes: { RawMessageDelivery: String(options.rawDelivery ?? false) },
        ReturnSubscriptionArn: true,
      }),
    );
    if (!subscriptionArn) throw new Error("Subscribe returned no SubscriptionArn");
    return {
      topicArn,
      queueUrl: queue.url,
      queueArn: queue.arn,
      dlqUrl: dlq.url,
      dlqArn: dlq.arn,
      subscriptionArn,
    };
  } finally {
    sns.destroy();
    sqs.destroy();
  }
}
