import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type QueueAttributeName,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { type WaitOptions, waitUntil } from "./wait-until.js";

export interface Received {
  readonly body: string;
  readonly attributes: Record<string, string>;
}

/**
 * Receives (and deletes) until `expected` messages arrived and the queue stayed empty for `quietMs`
 * after that — so a duplicate arriving late is still counted.
 */
export async function receiveAll(
  sqs: SQSClient,
  queueUrl: string,
  expected: number,
  { timeoutMs = 30_000, quietMs = 500 } = {},
): Promise<Received[]> {
  const received: Received[] = [];
  const until = Date.now() + timeoutMs;
  let quietSince = Date.now();
  while (Date.now() < until) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ["All"],
      }),
    );
    if (Messages.length === 0) {
      if (received.length >= expected && Date.now() - quietSince >= quietMs) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    quietSince = Date.now();
    for (const message of Messages) {
      const attributes: Record<string, string> = {};
      for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
        if (value.StringValue !== undefined) attributes[name] = value.StringValue;
      }
      received.push({ body: message.Body ?? "", attributes });
    }
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((message, index) => ({
          Id: String(index),
          ReceiptHandle: message.ReceiptHandle ?? "",
        })),
      }),
    );
  }
  return received;
}

/** Visible + in flight: 0 means every message was deleted (or moved). */
export async function queueDepth(
  sqs: SQSClient,
  queueUrl: string,
): Promise<{ visible: number; inFlight: number }> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    }),
  );
  return {
    visible: Number(Attributes?.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}

export interface DrainedMessage {
  body: string;
  /** Message attributes (string values). */
  attributes: Record<string, string>;
  /** FIFO queues: the MessageGroupId and MessageDeduplicationId system attributes. */
  groupId?: string;
  deduplicationId?: string;
}

const FIFO_SYSTEM_ATTRIBUTES: ["MessageGroupId", "MessageDeduplicationId"] = [
  "MessageGroupId",
  "MessageDeduplicationId",
];

/** Everything currently visible in a queue (e.g. the DLQ), consumed with a short poll loop. */
export async function drainQueue(sqs: SQSClient, queueUrl: string): Promise<DrainedMessage[]> {
  const found: DrainedMessage[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 60,
        MessageAttributeNames: ["All"],
        // Real SQS reads the first, local-aws-sqs only the legacy second (typed as queue attributes).
        MessageSystemAttributeNames: FIFO_SYSTEM_ATTRIBUTES,
        AttributeNames: FIFO_SYSTEM_ATTRIBUTES as unknown as QueueAttributeName[],
      }),
    );
    if (Messages.length === 0) return found;
    for (const message of Messages) {
      const attributes: Record<string, string> = {};
      for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
        attributes[name] = value.StringValue ?? "";
      }
      found.push({
        body: message.Body ?? "",
        attributes,
        groupId: message.Attributes?.MessageGroupId,
        deduplicationId: message.Attributes?.MessageDeduplicationId,
      });
    }
  }
}

/** A queue's messages once `count` have arrived (the DLQ's, say), drained as they come; bounded by `options`. */
export async function drainUntil(
  sqs: SQSClient,
  queueUrl: string,
  count: number,
  options: WaitOptions = {},
): Promise<DrainedMessage[]> {
  const found: DrainedMessage[] = [];
  await waitUntil(
    `${count} messages in ${queueUrl}`,
    async () => {
      found.push(...(await drainQueue(sqs, queueUrl)));
      return found.length >= count;
    },
    options,
  );
  return found;
}
