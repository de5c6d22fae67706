import { type MessageAttributeValue, PublishBatchCommand, type SNSClient } from "@aws-sdk/client-sns";
import type { Publisher, PublishRequest, PublishResult } from "./publisher.js";

/** The real bus: one `PublishBatch` per request; the caller's signal cancels the HTTP call. */
export function createSnsPublisher(client: SNSClient): Publisher {
  return {
    async publishBatch(request: PublishRequest, signal: AbortSignal): Promise<PublishResult> {
      const response = await client.send(
        new PublishBatchCommand({
          TopicArn: request.topicArn,
          PublishBatchRequestEntries: request.entries.map((entry) => ({
            Id: entry.id,
            Message: entry.message,
            MessageAttributes: toAttributes(entry.attributes),
            MessageGroupId: entry.groupId,
            MessageDeduplicationId: entry.deduplicationId,
          })),
        }),
        { abortSignal: signal },
      );
      return {
        failed: (response.Failed ?? []).map((failure) => ({
          id: failure.Id ?? "",
          reason: `${failure.Code ?? "Failed"}: ${failure.Message ?? "no message"}`,
        })),
      };
    },
  };
}

function toAttributes(attributes: Readonly<Record<string, string>>): Record<string, MessageAttributeValue> {
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(attributes))
    out[name] = { DataType: "String", StringValue: value };
  return out;
}
