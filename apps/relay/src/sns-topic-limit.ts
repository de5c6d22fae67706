import { GetTopicAttributesCommand, type SNSClient } from "@aws-sdk/client-sns";
import type { Deadline } from "@outbox/client";
import { MAX_MESSAGE_BYTES } from "@outbox/client/internal";
import { untilAborted } from "@outbox/shared";

/**
 * A topic's `MaximumMessageSize` as SNS reports it: GetTopicAttributes returns the attribute only
 * once it has been set, and a topic without it takes SNS's default (262 144). A value that is not a
 * whole number is thrown as an error: the caller decides what to fall back to.
 */
export async function readTopicMessageLimit(
  client: SNSClient,
  topicArn: string,
  deadline: Deadline,
): Promise<number> {
  // The per-call signal (which `sendWithSignal` avoids on the hot path) is fine here: this runs at
  // start-up and after SNS refused a message as too long, not per PublishBatch.
  const answer = await untilAborted(
    client.send(new GetTopicAttributesCommand({ TopicArn: topicArn }), { abortSignal: deadline.signal }),
    deadline,
  );
  const value = answer.Attributes?.MaximumMessageSize;
  if (value === undefined) return MAX_MESSAGE_BYTES;
  if (!/^\d+$/.test(value)) throw new Error(`MaximumMessageSize is not a whole number: "${value}"`);
  return Number(value);
}
