import { MAX_BATCH_ENTRIES, MAX_MESSAGE_BYTES } from "@outbox/client/internal";
import type { PublishStats } from "../stats/stats.js";
import { notificationEnvelope, type PublishedMessage } from "./envelope.js";
import type { Subscription } from "./registry.js";
import type { SqsJsonClient } from "./sqs-json.js";

export type DeliveryErrorHandler = (error: Error, subscription: Subscription) => void;

/** A SendMessageBatch entry as the SQS JSON protocol spells it (binary values stay base64). */
interface SqsEntry {
  Id: string;
  MessageBody: string;
  MessageAttributes?: Record<string, { DataType: string; StringValue?: string; BinaryValue?: string }>;
  MessageGroupId?: string;
  MessageDeduplicationId?: string;
}

interface SendMessageBatchOutput {
  Failed?: Array<{ Id?: string; Code?: string; Message?: string }>;
}

/**
 * Delivers published messages to SQS subscriptions through the SQS server's public API, so
 * queues see exactly what a real SNS → SQS delivery produces (envelope or raw body, FIFO group
 * and deduplication ids). Delivery happens before Publish answers: slower than AWS's async
 * delivery but it makes "published ⇒ receivable" deterministic for tests.
 */
export class FanOut {
  readonly #queueUrls = new Map<string, Promise<string>>();

  constructor(
    private readonly sqs: SqsJsonClient,
    private readonly region: string,
    private readonly snsEndpoint: () => string,
    private readonly onError: DeliveryErrorHandler,
    private readonly stats?: PublishStats,
  ) {}

  async deliver(subscriptions: Subscription[], messages: PublishedMessage[]): Promise<void> {
    if (messages.length === 0 || subscriptions.length === 0) return;
    if (subscriptions.length === 1) return this.#deliverSafely(subscriptions[0] as Subscription, messages);
    await Promise.all(subscriptions.map((subscription) => this.#deliverSafely(subscription, messages)));
  }

  async #deliverSafely(subscription: Subscription, messages: PublishedMessage[]): Promise<void> {
    if (subscription.protocol !== "sqs") return;
    let delivered = 0;
    try {
      const queueUrl = await this.#queueUrl(subscription.endpoint);
      const raw = subscription.attributes.RawMessageDelivery === "true";
      const unsubscribeUrl = raw
        ? ""
        : `${this.snsEndpoint()}/?Action=Unsubscribe&SubscriptionArn=${encodeURIComponent(subscription.arn)}`;
      const entries = messages.map((m, i) => this.#entry(m, raw, unsubscribeUrl, i));
      for (const chunk of chunkBySize(entries)) {
        const result = await this.sqs.call<SendMessageBatchOutput>("SendMessageBatch", {
          QueueUrl: queueUrl,
          Entries: chunk,
        });
        const failed = result.Failed ?? [];
        delivered += chunk.length - failed.length;
        const first = failed[0];
        if (first) throw new Error(`SQS refused delivery: ${first.Code} ${first.Message ?? ""}`.trim());
      }
    } catch (error) {
      // AWS never reports delivery failures to the publisher; neither do we.
      this.onError(error instanceof Error ? error : new Error(String(error)), subscription);
    } finally {
      const topicArn = subscription.topicArn;
      if (delivered > 0) this.stats?.delivered(topicArn, delivered);
      if (delivered < messages.length) this.stats?.deliveryFailed(topicArn, messages.length - delivered);
    }
  }

  #entry(published: PublishedMessage, raw: boolean, unsubscribeUrl: string, index: number): SqsEntry {
    const entry: SqsEntry = {
      Id: String(index),
      MessageBody: raw ? published.message : notificationEnvelope(published, this.region, unsubscribeUrl),
    };
    // Without raw delivery the attributes travel inside the envelope only, as on AWS.
    if (raw && published.attributes.length > 0) {
      const attributes: NonNullable<SqsEntry["MessageAttributes"]> = {};
      for (const a of published.attributes) {
        attributes[a.name] = a.binaryValue
          ? { DataType: a.dataType, BinaryValue: a.binaryValue }
          : { DataType: a.dataType, StringValue: a.stringValue ?? "" };
      }
      entry.MessageAttributes = attributes;
    }
    if (published.groupId !== undefined) entry.MessageGroupId = published.groupId;
    if (published.deduplicationId !== undefined) entry.MessageDeduplicationId = published.deduplicationId;
    return entry;
  }

  /** Queue ARN → URL via GetQueueUrl (by name and owner), cached; a failure is not cached. */
  #queueUrl(queueArn: string): Promise<string> {
    let url = this.#queueUrls.get(queueArn);
    if (!url) {
      const [, , service, , owner, name] = queueArn.split(":");
      if (service !== "sqs" || !owner || !name)
        return Promise.reject(new Error(`not a queue ARN: ${queueArn}`));
      url = this.sqs
        .call<{ QueueUrl?: string }>("GetQueueUrl", { QueueName: name, QueueOwnerAWSAccountId: owner })
        .then((r) => r.QueueUrl ?? Promise.reject(new Error(`no URL for ${queueArn}`)));
      url.catch(() => this.#queueUrls.delete(queueArn));
      this.#queueUrls.set(queueArn, url);
    }
    return url;
  }
}

/** SendMessageBatch takes ≤ 10 entries and ≤ 256 KiB in total; envelopes make SNS batches bigger. */
function chunkBySize(entries: SqsEntry[]): SqsEntry[][] {
  if (entries.length === 1) return [entries];
  const chunks: SqsEntry[][] = [];
  let current: SqsEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = Buffer.byteLength(entry.MessageBody) + attributeBytes(entry.MessageAttributes);
    if (current.length > 0 && (current.length === MAX_BATCH_ENTRIES || bytes + size > MAX_MESSAGE_BYTES)) {
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

function attributeBytes(attributes: SqsEntry["MessageAttributes"]): number {
  if (!attributes) return 0;
  let bytes = 0;
  for (const name in attributes) {
    const value = attributes[name];
    if (!value) continue;
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value.DataType);
    bytes += value.BinaryValue
      ? Buffer.from(value.BinaryValue, "base64").length
      : Buffer.byteLength(value.StringValue ?? "");
  }
  return bytes;
}
