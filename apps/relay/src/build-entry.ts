import type { ClaimedRow } from "./claim-batch.js";
import type { PublishEntry } from "./publisher.js";

/** SNS's limit for one message, body and attributes together; also the limit of a whole PublishBatch. */
export const MAX_MESSAGE_BYTES = 256 * 1024;
/** SNS accepts at most 10 message attributes; two are ours (`event_id`, `event_type`). */
const MAX_ATTRIBUTES = 10;
const ATTRIBUTE_NAME = /^(?!\.)(?!.*\.\.)(?!.*\.$)[A-Za-z0-9_.-]{1,256}$/;
const RESERVED_PREFIX = /^(aws|amazon)\./i;
/** MessageGroupId: 1–128 printable ASCII characters. */
const GROUP_ID = /^[\x21-\x7e]{1,128}$/;

/** Maps the logical `topic` column to a topic ARN; `undefined` when nothing is configured for it. */
export type TopicResolver = (topic: string) => string | undefined;

export type BuiltEntry =
  | {
      readonly kind: "ready";
      readonly topicArn: string;
      readonly entry: PublishEntry;
      readonly bytes: number;
    }
  | { readonly kind: "unsendable"; readonly reason: string };

/**
 * The message a row becomes, or why it can never be sent. Rows that can never be sent die at once:
 * retrying identical bytes against the same limits would only burn attempts and block their key.
 */
export function buildEntry(row: ClaimedRow, resolveTopic: TopicResolver): BuiltEntry {
  const topicArn = resolveTopic(row.topic);
  if (topicArn === undefined) {
    return {
      kind: "unsendable",
      reason: `unknown topic "${row.topic}": not in RELAY_TOPIC_ARNS, no default`,
    };
  }
  const headers = Object.entries(row.headers).filter(
    ([name]) => name !== "event_id" && name !== "event_type",
  );
  if (headers.length + 2 > MAX_ATTRIBUTES) {
    return {
      kind: "unsendable",
      reason: `${headers.length} headers: SNS takes ${MAX_ATTRIBUTES} message attributes, 2 of them event_id and event_type`,
    };
  }
  for (const [name, value] of headers) {
    if (!ATTRIBUTE_NAME.test(name) || RESERVED_PREFIX.test(name)) {
      return {
        kind: "unsendable",
        reason: `header name "${name}" is not a valid SNS message attribute name`,
      };
    }
    if (typeof value !== "string" || value === "") {
      return { kind: "unsendable", reason: `header "${name}" must be a non-empty string` };
    }
  }
  // Headers first, ours last: a header cannot impersonate the event's id or type.
  const attributes: Record<string, string> = Object.fromEntries(headers);
  attributes.event_id = row.id;
  attributes.event_type = row.eventType;

  let bytes = Buffer.byteLength(row.payload);
  for (const [name, value] of Object.entries(attributes)) {
    bytes += Buffer.byteLength(name) + "String".length + Buffer.byteLength(value);
  }
  if (bytes > MAX_MESSAGE_BYTES) {
    return {
      kind: "unsendable",
      reason: `message is ${bytes} bytes with attributes, over the ${MAX_MESSAGE_BYTES}-byte SNS limit`,
    };
  }

  if (!topicArn.endsWith(".fifo")) {
    return { kind: "ready", topicArn, bytes, entry: { id: row.id, message: row.payload, attributes } };
  }
  // FIFO: the ordering key is the message group, so SNS keeps each key's order and nothing more.
  // Rows without a key get their own group (their id): they promised no order, so they should not
  // queue behind each other. The event id deduplicates a re-send within SNS's 5-minute window.
  const groupId = row.orderingKey ?? row.id;
  if (!GROUP_ID.test(groupId)) {
    return {
      kind: "unsendable",
      reason: "ordering key is not a valid FIFO MessageGroupId (1–128 printable ASCII)",
    };
  }
  return {
    kind: "ready",
    topicArn,
    bytes,
    entry: { id: row.id, message: row.payload, attributes, groupId, deduplicationId: row.id },
  };
}
