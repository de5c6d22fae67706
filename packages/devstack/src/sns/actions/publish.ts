import { acceptMessage } from "../envelope.js";
import { invalidParameter } from "../errors.js";
import { eventId, prepareMessage } from "../message.js";
import type { Action } from "./context.js";

export const publish: Action = async ({ params, registry, fanOut, stats }) => {
  if (params.has("PhoneNumber"))
    throw invalidParameter("PhoneNumber: SMS is not supported by the local SNS emulator");
  const topic = registry.topic(params.get("TopicArn") ?? params.get("TargetArn"));
  const published = acceptMessage(topic, prepareMessage(topic, params));
  stats.published(topic.arn, eventId(published, stats.eventIdAttribute));
  await fanOut.deliver(registry.subscriptionsOf(topic), [published]);
  return {
    MessageId: published.messageId,
    ...(published.sequenceNumber ? { SequenceNumber: published.sequenceNumber } : {}),
  };
};
