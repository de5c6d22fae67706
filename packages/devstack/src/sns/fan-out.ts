import {
  GetQueueUrlCommand,
  type MessageAttributeValue,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { notificationEnvelope, type PublishedMessage } from "./envelope.js";
import { MAX_MESSAGE_BYTES } from "./message.js";
import type { Subscription } from "./registry.js";

export type DeliveryErrorHandler = (error: Error, subscription: Subscription) => void;

/**
 * Delivers published messages to SQS subscriptions through the SQS server's public API, so
 * queues see exactly what a real SNS → SQS delivery produces (envelope or raw body, FIFO group
 * and deduplication ids). Delivery happens before Publish answers: slower than AWS's async
 * delivery but it makes "published ⇒ receivable" deterministic for tests.
 */
export class FanOut {
  readonly #queueUrls = new Map<string, Promise<string>>();

  constructor(
    private readonly sqs: SQSClient,
    private readonly region: string,
    private readonly snsEndpoint: () => string,
    private readonly onError: DeliveryErrorHandler,
  ) {}

  async deliver(subscriptions: Subscription[], messages: PublishedMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await Promise.all(
      subscriptions.map((subscription) =>
        this.#deliverTo(subscription, messages).catch((error: unknown) =>
          // AWS never reports delivery failures to the publisher; neither do we.
          this.onError(error instanceof Error ? error : new Error(String(error)), subscription),
        ),
      ),
    );
  }

  async #deliverTo(subscription: Subscription, messages: PublishedMessage[]): Promise<void> {
    if (subscription.protocol !== "sqs") return;
    const queueUrl = await this.#queueUrl(subscription.endpoint);
    const raw = subscription.attributes.RawMessageDelivery === "true";
    const entries = messages.map((m, i) => this.#entry(subscription, m, raw, i));
    for (const chunk of chunkBySize(entries)) {
      const result = await this.sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: chunk }));
      const failed = result.Failed?.[0];
      if (failed) throw new Error(`SQS refused delivery: ${failed.Code} ${failed.Message ?? ""}`.trim());
    }
  }

  #entry(
    subscription: Subscription,
    published: PublishedMessage,
    raw: boolean,
    index: number,
  ): SendMessageBatchRequestEntry {
    const unsubscribeUrl = `${this.snsEndpoint()}/?Action=Unsubscribe&SubscriptionArn=${encodeURIComponent(subscription.arn)}`;
    return {
      Id: String(index),
      MessageBody: raw ? published.message : notificationEnvelope(published, this.region, unsubscribeUrl),
      // Without raw delivery the attributes travel inside the envelope only, as on AWS.
      MessageAttributes: raw ? sqsAttributes(published) : undefined,
      MessageGroupId: published.groupId,
      MessageDeduplicationId: published.deduplicationId,
    };
  }

  /** Queue ARN → URL via GetQueueUrl (by name and owner), cached; a failure is not cached. */
  #queueUrl(queueArn: string): Promise<string> {
    let url = this.#queueUrls.get(queueArn);
    if (!url) {
      const [, , service, , owner, name] = queueArn.split(":");
      if (service !== "sqs" || !owner || !name)
        return Promise.reject(new Error(`not a queue ARN: ${queueArn}`));
      url = this.sqs
        .send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: owner }))
        .then((r) => r.QueueUrl ?? Promise.reject(new Error(`no URL for ${queueArn}`)));
      url.catch(() => this.#queueUrls.delete(queueArn));
      this.#queueUrls.set(queueArn, url);
    }
    return url;
  }
}

function sqsAttributes(published: PublishedMessage): Record<string, MessageAttributeValue> | undefined {
  if (published.attributes.length === 0) return undefined;
  const out: Record<string, MessageAttributeValue> = {};
  for (const a of published.attributes) {
    out[a.name] = a.binaryValue
      ? { DataType: a.dataType, BinaryValue: Buffer.from(a.binaryValue, "base64") }
      : { DataType: a.dataType, StringValue: a.stringValue };
  }
  return out;
}

/** SendMessageBatch takes ≤ 10 entries and ≤ 256 KiB in total; envelopes make SNS batches bigger. */
function chunkBySize(entries: SendMessageBatchRequestEntry[]): SendMessageBatchRequestEntry[][] {
  const chunks: SendMessageBatchRequestEntry[][] = [];
  let current: SendMessageBatchRequestEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = Buffer.byteLength(entry.MessageBody ?? "") + attributeBytes(entry.MessageAttributes);
    if (current.length > 0 && (current.length === 10 || bytes + size > MAX_MESSAGE_BYTES)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

function attributeBytes(attributes: Record<string, MessageAttributeValue> | undefined): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(attributes ?? {})) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value.DataType ?? "");
    bytes += value.BinaryValue?.length ?? Buffer.byteLength(value.StringValue ?? "");
  }
  return bytes;
}
