/**
 * The SNS message an outbox event becomes, shared by `enqueue` (which refuses what could never be
 * published) and the relay (which builds and sends it): both measure and check with these functions,
 * so an event `enqueue` accepts is one the relay can send.
 */

/** SNS's limit for one message, body and attributes together; also the limit of a whole PublishBatch. */
export const MAX_MESSAGE_BYTES = 256 * 1024;
/** SNS accepts at most 10 message attributes; two are the relay's own (`event_id`, `event_type`). */
const MAX_ATTRIBUTES = 10;
const ATTRIBUTE_NAME = /^(?!\.)(?!.*\.\.)(?!.*\.$)[A-Za-z0-9_.-]{1,256}$/;
const RESERVED_PREFIX = /^(aws|amazon)\./i;

/** An event's headers without `event_id` and `event_type`, which the relay sets itself. */
function headerEntries<T>(headers: Readonly<Record<string, T>>): [string, T][] {
  return Object.entries(headers).filter(([name]) => name !== "event_id" && name !== "event_type");
}

/** Why these headers cannot travel as SNS message attributes, or `undefined` when they can. */
export function headersProblem(headers: Readonly<Record<string, unknown>>): string | undefined {
  const entries = headerEntries(headers);
  if (entries.length + 2 > MAX_ATTRIBUTES) {
    return `${entries.length} headers: SNS takes ${MAX_ATTRIBUTES} message attributes, 2 of them event_id and event_type`;
  }
  for (const [name, value] of entries) {
    if (!ATTRIBUTE_NAME.test(name) || RESERVED_PREFIX.test(name)) {
      return `header name "${name}" is not a valid SNS message attribute name`;
    }
    if (typeof value !== "string" || value === "") return `header "${name}" must be a non-empty string`;
  }
  return undefined;
}

/**
 * The String message attributes an event is published with: its headers, then `event_id` and
 * `event_type` last, so a header cannot impersonate the event's id or type. Check `headersProblem` first.
 */
export function messageAttributes(
  id: string,
  eventType: string,
  headers: Readonly<Record<string, string>>,
): Record<string, string> {
  const attributes: Record<string, string> = Object.fromEntries(headerEntries(headers));
  attributes.event_id = id;
  attributes.event_type = eventType;
  return attributes;
}

export interface MessageSize {
  /** What SNS counts against its limit: the body plus every attribute's name, data type and value, in UTF-8. */
  readonly bytes: number;
  /** Why the message is over the limit, or `undefined` when it fits. */
  readonly problem: string | undefined;
}

/** The size of the SNS message with this body (the payload's JSON text) and these String attributes. */
export function measureMessage(body: string, attributes: Readonly<Record<string, string>>): MessageSize {
  const bodyBytes = Buffer.byteLength(body);
  let attributeBytes = 0;
  for (const [name, value] of Object.entries(attributes)) {
    attributeBytes += Buffer.byteLength(name) + "String".length + Buffer.byteLength(value);
  }
  const bytes = bodyBytes + attributeBytes;
  return {
    bytes,
    problem:
      bytes > MAX_MESSAGE_BYTES
        ? `message would be ${bytes} bytes (payload ${bodyBytes} + attributes ${attributeBytes}), over the ${MAX_MESSAGE_BYTES}-byte SNS limit`
        : undefined,
  };
}
