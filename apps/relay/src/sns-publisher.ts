import { type MessageAttributeValue, PublishBatchCommand, type SNSClient } from "@aws-sdk/client-sns";
import type { Deadline } from "@outbox/client";
import { untilAborted } from "@outbox/shared";
import { PublishAbortedError } from "./errors.js";
import type { Publisher, PublishRequest, PublishResult } from "./publisher.js";
import { sendWithSignal } from "./sdk-call-signal.js";
import { readTopicMessageLimit } from "./sns-topic-limit.js";

/**
 * The real bus: one `PublishBatch` per request; the call's deadline cancels the HTTP call. Each
 * topic's limit is its `MaximumMessageSize` (GetTopicAttributes).
 */
export function createSnsPublisher(client: SNSClient): Publisher {
  return {
    messageLimit: (topicArn, deadline) => readTopicMessageLimit(client, topicArn, deadline),
    async publishBatch(request: PublishRequest, deadline: Deadline): Promise<PublishResult> {
      const command = new PublishBatchCommand({
        TopicArn: request.topicArn,
        PublishBatchRequestEntries: request.entries.map((entry) => ({
          Id: entry.id,
          Message: entry.message,
          MessageAttributes: toAttributes(entry.attributes),
          MessageGroupId: entry.groupId,
          MessageDeduplicationId: entry.deduplicationId,
        })),
      });
      // The signal is the SDK's boundary: the HTTP handler takes nothing else.
      const sent = sendWithSignal(client, command, deadline.signal);
      let response: Awaited<typeof sent>;
      try {
        // Not only `sent`: the SDK's wait between retries, which the signal does not cut short,
        // must not hold the caller up. `sent` still settles after an abort; nobody awaits it then.
        response = await untilAborted(sent, deadline);
      } catch (error) {
        if (deadline.aborted) throw new PublishAbortedError("Request aborted", { cause: error });
        throw error;
      }
      // Taken as they are, absent lists included: an empty 200 (a proxy, a lying endpoint) parses into
      // a response with neither list, and must not read as "nothing failed".
      return {
        published: (response.Successful ?? []).map((entry) => entry.Id ?? ""),
        requestId: response.$metadata.requestId,
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
