/**
 * The SNS message an outbox event becomes, shared by `enqueue` (which refuses what could never be
 * published) and the relay (which builds and sends it): both measure and check with these functions,
 * so an event `enqueue` accepts is one the relay can send.
 */

import {
  EVENT_ID_ATTRIBUTE,
  EVENT_TYPE_ATTRIBUTE,
  MAX_MESSAGE_ATTRIBUTES,
  MAX_MESSAGE_BYTES,
} from "./message-contract.js";

/** The attributes the relay sets itself, whatever the headers say. */
const OWN_ATTRIBUTES: readonly string[] = [EVENT_ID_ATTRIBUTE, EVENT_TYPE_ATTRIBUTE];
const ATTRIBUTE_NAME = /^(?!\.)(?!.*\.\.)(?!.*\.$)[A-Za-z0-9_.-]{1,256}$/;
const RESERVED_PREFIX = /^(aws|amazon)\./i;

/** An event's headers without the attributes the relay sets itself. */
function headerEntries<T>(headers: Readonly<Record<string, T>>): [string, T][] {
  return Object.entries(headers).filter(([name]) => !OWN_ATTRIBUTES.includes(name));
}

/** Why these headers cannot travel as SNS message attributes, or `undefined` when they can. */
export function headersProblem(headers: Readonly<Record<string, unknown>>): string | undefined {
  const entries = headerEntries(headers);
  if (entries.length + OWN_ATTRIBUTES.length > MAX_MESSAGE_ATTRIBUTES) {
    return `${entries.length} headers: SNS takes ${MAX_MESSAGE_ATTRIBUTES} message attributes, ${OWN_ATTRIBUTES.length} of them ${OWN_ATTRIBUTES.join(" and ")}`;
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
 * The String message attributes an event is published with: its headers, then the event's id and
 * type last, so a header cannot impersonate them. Check `headersProblem` first.
 */
export function messageAttributes(
  id: string,
  eventType: string,
  headers: Readonly<Record<string, string>>,
): Record<string, string> {
  const attributes: Record<string, string> = Object.fromEntries(headerEntries(headers));
  attributes[EVENT_ID_ATTRIBUTE] = id;
  attributes[EVENT_TYPE_ATTRIBUTE] = eventType;
  return attributes;
}

export interface MessageSize {
  /** What SNS counts against its limit: the body plus every attribute's name, data type and value, in UTF-8. */
  readonly bytes: number;
  /** Why the message is over the limit, or `undefined` when it fits. */
  readonly problem: string | undefined;
}

/**
 * The size of the SNS message with this body (the payload's JSON text) and these String attributes,
 * checked against `limitBytes`: the topic's `MaximumMessageSize`, SNS's default when not given.
 */
export function measureMessage(
  body: string,
  attributes: Readonly<Record<string, string>>,
  limitBytes: number = MAX_MESSAGE_BYTES,
): MessageSize {
  const bodyBytes = Buffer.byteLength(body);
  let attributeBytes = 0;
  for (const [name, value] of Object.entries(attributes)) {
    attributeBytes += Buffer.byteLength(name) + "String".length + Buffer.byteLength(value);
  }
  const bytes = bodyBytes + attributeBytes;
  return {
    bytes,
    problem:
      bytes > limitBytes
        ? `message would be ${bytes} bytes (payload ${bodyBytes} + attributes ${attributeBytes}), over the ${limitBytes}-byte SNS limit`
        : undefined,
  };
}
