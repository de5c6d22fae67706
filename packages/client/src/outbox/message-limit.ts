import type { EnqueueOptions } from "./enqueue-options.js";
import {
  isTopicMessageLimit,
  MAX_MESSAGE_BYTES,
  MAX_TOPIC_MESSAGE_BYTES,
  MIN_TOPIC_MESSAGE_BYTES,
} from "./message-contract.js";

/** The size limit of each logical topic's messages, from `EnqueueOptions.maxMessageBytes`. */
export type MessageLimit = (topic: string) => number;

function checkedLimit(bytes: number, name: string): number {
  if (!isTopicMessageLimit(bytes)) {
    throw new RangeError(
      `enqueue: ${name} must be an integer from ${MIN_TOPIC_MESSAGE_BYTES} to ${MAX_TOPIC_MESSAGE_BYTES} (an SNS topic's MaximumMessageSize range), got ${bytes}`,
    );
  }
  return bytes;
}

/**
 * Checks the option before any event is looked at, so a wrong limit fails the call whatever the
 * events, and nothing is written.
 */
export function messageLimit(maxMessageBytes: EnqueueOptions["maxMessageBytes"]): MessageLimit {
  if (maxMessageBytes === undefined) return () => MAX_MESSAGE_BYTES;
  if (typeof maxMessageBytes === "number") {
    const bytes = checkedLimit(maxMessageBytes, "maxMessageBytes");
    return () => bytes;
  }
  const perTopic = new Map<string, number>();
  for (const [topic, bytes] of Object.entries(maxMessageBytes)) {
    perTopic.set(topic, checkedLimit(bytes, `maxMessageBytes[${JSON.stringify(topic)}]`));
  }
  return (topic) => perTopic.get(topic) ?? MAX_MESSAGE_BYTES;
}
