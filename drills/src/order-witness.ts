import { SubscribeCommand } from "@aws-sdk/client-sns";
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
} from "@aws-sdk/client-sqs";
import { EVENT_ID_ATTRIBUTE } from "@outbox/client";
import { snsClient, sqsClient } from "@outbox/devstack";
import type { DrillEnvironment } from "./drill-environment.js";

/** A second FIFO queue on the drill's topic, read only by the drill: the order the bus took events in. */
export interface OrderWitness {
  /** Every event id delivered since the last call, in the order the topic accepted them. */
  read(): Promise<string[]>;
}

/**
 * Subscribes a FIFO queue of its own to the environment's (FIFO) topic. The emulator delivers to
 * SQS before it answers a publish, so the queue's order is the order the relay's publishes were
 * accepted in — the relay's per-key order, seen from the bus, whatever the consumer does.
 */
export async function startOrderWitness(environment: DrillEnvironment): Promise<OrderWitness> {
  const { aws } = environment.stack;
  const { topicArn } = environment.resources;
  const name = `${topicArn.slice(topicArn.lastIndexOf(":") + 1).replace(/\.fifo$/, "")}-witness.fifo`;
  const sqs = sqsClient(aws);
  const sns = snsClient(aws);
  try {
    const { QueueUrl: queueUrl } = await sqs.send(
      new CreateQueueCommand({ QueueName: name, Attributes: { FifoQueue: "true" } }),
    );
    if (!queueUrl) throw new Error(`CreateQueue ${name} returned no URL`);
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ["QueueArn"] }),
    );
    await sns.send(
      new SubscribeCommand({
        TopicArn: topicArn,
        Protocol: "sqs",
        Endpoint: Attributes?.QueueArn,
        Attributes: { RawMessageDelivery: "true" },
      }),
    );
    return {
      async read() {
        const reader = sqsClient(aws);
        const ids: string[] = [];
        try {
          for (;;) {
            const { Messages = [] } = await reader.send(
              new ReceiveMessageCommand({
                QueueUrl: queueUrl,
                MaxNumberOfMessages: 10,
                WaitTimeSeconds: 0,
                MessageAttributeNames: [EVENT_ID_ATTRIBUTE],
              }),
            );
            if (Messages.length === 0) return ids;
            for (const message of Messages) {
              const id = message.MessageAttributes?.[EVENT_ID_ATTRIBUTE]?.StringValue;
              if (id) ids.push(id);
            }
            await reader.send(
              new DeleteMessageBatchCommand({
                QueueUrl: queueUrl,
                Entries: Messages.map((message, index) => ({
                  Id: String(index),
                  ReceiptHandle: message.ReceiptHandle,
                })),
              }),
            );
          }
        } finally {
          reader.destroy();
        }
      },
    };
  } finally {
    sqs.destroy();
    sns.destroy();
  }
}
