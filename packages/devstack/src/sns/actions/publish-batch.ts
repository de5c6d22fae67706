import { MAX_BATCH_ENTRIES } from "@outbox/client/internal";
import { acceptMessage, type PublishedMessage } from "../envelope.js";
import { SnsError } from "../errors.js";
import { checkFifoParameters, eventId, prepareMessage } from "../message.js";
import { topicMessageLimit } from "../message-size.js";
import { queryList, queryStructMap } from "../query.js";
import type { XmlObject } from "../xml.js";
import type { Action } from "./context.js";

const ENTRY_ID = /^[A-Za-z0-9_-]{1,80}$/;

function attributeBytes(entry: ReadonlyMap<string, string>): number {
  let bytes = Buffer.byteLength(entry.get("Message") ?? "");
  for (const [name, value] of queryStructMap(entry, "MessageAttributes")) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value.get("DataType") ?? "");
    const binary = value.get("BinaryValue");
    bytes += binary
      ? Buffer.from(binary, "base64").length
      : Buffer.byteLength(value.get("StringValue") ?? "");
  }
  return bytes;
}

/**
 * Request-level limits are typed errors (HTTP 400); problems with single entries come back as
 * `Failed` entries in an HTTP 200, which is exactly what makes partial failure easy to miss.
 */
export const publishBatch: Action = async ({ params, registry, fanOut, faults, stats }) => {
  const topic = registry.topic(params.get("TopicArn"));
  const entries = queryList(params, "PublishBatchRequestEntries");
  if (entries.length === 0) {
    throw new SnsError("EmptyBatchRequest", "The batch request doesn't contain any entries.");
  }
  if (entries.length > MAX_BATCH_ENTRIES) {
    throw new SnsError(
      "TooManyEntriesInBatchRequest",
      "The batch request contains more entries than permissible.",
    );
  }
  const ids = new Set<string>();
  for (const entry of entries) {
    const id = entry.get("Id") ?? "";
    if (!ENTRY_ID.test(id)) {
      throw new SnsError(
        "InvalidBatchEntryId",
        "The Id of a batch entry in a batch request doesn't abide by the specification.",
      );
    }
    if (ids.has(id))
      throw new SnsError(
        "BatchEntryIdsNotDistinct",
        "Two or more batch entries in the request have the same Id.",
      );
    ids.add(id);
  }
  // The whole batch is bounded by the topic's MaximumMessageSize, as one message is (PublishBatch's
  // API reference): 256 KiB unless the topic's limit was raised.
  if (entries.reduce((sum, entry) => sum + attributeBytes(entry), 0) > topicMessageLimit(topic)) {
    throw new SnsError(
      "BatchRequestTooLong",
      "The length of all the messages put together is more than the limit.",
    );
  }
  for (const entry of entries) checkFifoParameters(topic, entry);

  const successful: XmlObject[] = [];
  const failed: XmlObject[] = [];
  const accepted: PublishedMessage[] = [];
  for (const entry of entries) {
    const Id = entry.get("Id") ?? "";
    try {
      const prepared = prepareMessage(topic, entry);
      if (faults.failsBatchEntry({ action: "PublishBatch", topicArn: topic.arn }, prepared.attributes)) {
        failed.push({
          Id,
          Code: "InternalError",
          Message: "Injected fault: entry failed",
          SenderFault: false,
        });
        continue;
      }
      const published = acceptMessage(topic, prepared);
      accepted.push(published);
      stats.published(topic.arn, eventId(published, stats.eventIdAttribute));
      successful.push({
        Id,
        MessageId: published.messageId,
        ...(published.sequenceNumber ? { SequenceNumber: published.sequenceNumber } : {}),
      });
    } catch (error) {
      if (!(error instanceof SnsError)) throw error;
      failed.push({ Id, Code: error.code, Message: error.message, SenderFault: error.type === "Sender" });
    }
  }
  await fanOut.deliver(registry.subscriptionsOf(topic), accepted);
  return { Successful: { member: successful }, Failed: { member: failed } };
};
