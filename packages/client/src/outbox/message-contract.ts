/**
 * What the relay and the consumer agree on about a message on the bus, and the SNS/SQS limits both
 * work within. The relay, the consumer and the local SNS emulator read them from here; tests spell the
 * attribute names out on purpose, so that a rename here shows up as a changed wire format.
 */

/** The message attribute carrying the outbox row's id: the consumer's inbox key. */
export const EVENT_ID_ATTRIBUTE = "event_id";
/** The message attribute carrying the event type: it picks the consumer's handler. */
export const EVENT_TYPE_ATTRIBUTE = "event_type";

/**
 * The message attribute `relay republish` adds, `"true"`: a re-send of an event already published, for
 * a new subscriber or a lost downstream. A consumer that had the event already counts it as a
 * duplicate (its inbox), so it needs no special handling; it tells replays apart in logs and metrics.
 */
export const REPLAY_ATTRIBUTE = "replay";

/**
 * SNS's limit for one message, body and attributes together, on a topic whose `MaximumMessageSize`
 * was never set; a topic's PublishBatch is bounded by the same limit in total. Also the one the
 * emulator applies to each SQS batch it fans a publish out in.
 */
export const MAX_MESSAGE_BYTES = 256 * 1024;
/** The most a topic's `MaximumMessageSize` can be raised to (1 MiB); SQS takes as much by default. */
export const MAX_TOPIC_MESSAGE_BYTES = 1024 * 1024;
/** The least a topic's `MaximumMessageSize` can be set to. */
export const MIN_TOPIC_MESSAGE_BYTES = 1024;

/** Whether `bytes` is a `MaximumMessageSize` SNS takes: an integer from 1 024 to 1 048 576. */
export function isTopicMessageLimit(bytes: number): boolean {
  return Number.isInteger(bytes) && bytes >= MIN_TOPIC_MESSAGE_BYTES && bytes <= MAX_TOPIC_MESSAGE_BYTES;
}
/** SNS accepts at most 10 message attributes per message. */
export const MAX_MESSAGE_ATTRIBUTES = 10;
/**
 * Entries per batch call: SNS PublishBatch and SQS ReceiveMessage, SendMessageBatch, DeleteMessageBatch
 * and ChangeMessageVisibilityBatch all take at most 10.
 */
export const MAX_BATCH_ENTRIES = 10;
/** SQS's longest visibility timeout (12 h): no lease nor retry delay can be longer. */
export const MAX_VISIBILITY_SECONDS = 43_200;
