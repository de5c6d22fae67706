import {
  isTopicMessageLimit,
  MAX_MESSAGE_BYTES,
  MAX_TOPIC_MESSAGE_BYTES,
  MIN_TOPIC_MESSAGE_BYTES,
} from "@outbox/client/internal";
import { invalidParameter } from "./errors.js";
import type { Topic } from "./registry.js";

/**
 * The `MaximumMessageSize` topic attribute, as the SNS API reference describes it (read from the
 * @aws-sdk/client-sns model docs, CreateTopic/SetTopicAttributes/GetTopicAttributes/PublishBatch, and
 * the developer guide's "Large message payloads"): an integer from 1 024 to 1 048 576 bytes, 262 144
 * when never set, and GetTopicAttributes returns it only once it has been set. It bounds each
 * message (body plus attributes) and the sum of a PublishBatch's entries. A topic above 256 KiB may
 * have at most 100 subscriptions, all SQS, Firehose or Lambda; breaking that is an `InvalidParameter`.
 * The reference gives the codes, not the wording: the messages below are ours. moto 5.2.1 (the
 * cross-check at hand, run as moto_server) knows no such attribute: it takes any value (5 too),
 * never returns it, keeps Publish at 256 KiB and checks no PublishBatch total; so it confirms only
 * Publish's `InvalidParameter` "Invalid parameter: Message too long", which is what we answer.
 */
const DEFAULT_MAXIMUM_MESSAGE_SIZE = MAX_MESSAGE_BYTES;
/** Subscriptions a topic above the default may have. */
const LARGE_TOPIC_SUBSCRIPTIONS = 100;
/** Protocols a topic above the default may deliver to; the emulator itself only delivers to `sqs`. */
const LARGE_TOPIC_PROTOCOLS: readonly string[] = ["sqs", "firehose", "lambda"];

/** The most bytes one message (and one PublishBatch in total) may have on this topic. */
export function topicMessageLimit(topic: Topic): number {
  const value = topic.attributes.MaximumMessageSize;
  return value === undefined ? DEFAULT_MAXIMUM_MESSAGE_SIZE : Number(value);
}

/** The attribute's value as SNS takes it: digits only, within 1 024–1 048 576. */
export function checkMaximumMessageSize(value: string): number {
  const bytes = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!isTopicMessageLimit(bytes)) {
    throw invalidParameter(
      `Attributes Reason: MaximumMessageSize must be an integer between ${MIN_TOPIC_MESSAGE_BYTES} and ${MAX_TOPIC_MESSAGE_BYTES} bytes, got "${value}"`,
    );
  }
  return bytes;
}

/** Whether a topic limited to `bytes` may have these subscriptions; throws `InvalidParameter` if not. */
export function checkLargeTopicSubscriptions(bytes: number, protocols: readonly string[]): void {
  if (bytes <= DEFAULT_MAXIMUM_MESSAGE_SIZE) return;
  if (protocols.length > LARGE_TOPIC_SUBSCRIPTIONS) {
    throw invalidParameter(
      `Attributes Reason: a topic with MaximumMessageSize above ${DEFAULT_MAXIMUM_MESSAGE_SIZE} may have at most ${LARGE_TOPIC_SUBSCRIPTIONS} subscriptions, it would have ${protocols.length}`,
    );
  }
  const other = protocols.find((protocol) => !LARGE_TOPIC_PROTOCOLS.includes(protocol));
  if (other !== undefined) {
    throw invalidParameter(
      `Attributes Reason: a topic with MaximumMessageSize above ${DEFAULT_MAXIMUM_MESSAGE_SIZE} delivers only to ${LARGE_TOPIC_PROTOCOLS.join(", ")} subscriptions, not ${other}`,
    );
  }
}
