import type { Message } from "@aws-sdk/client-sqs";
import { describeError, EVENT_ID_ATTRIBUTE, EVENT_TYPE_ATTRIBUTE } from "@outbox/shared";
import { PoisonReason } from "./errors.js";

/** A message whose body and attributes make sense; which handler takes it is decided later. */
export interface DecodedMessage {
  readonly eventId: string;
  readonly eventType: string;
  readonly payload: unknown;
  readonly headers: Record<string, string>;
}

// The inbox column is uuid: a malformed id must be poison here, not a failing INSERT retried forever.
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A message attribute as either delivery shows it: `DataType`/`StringValue` (raw) or `Type`/`Value` (envelope). */
interface Attribute {
  readonly type: string;
  readonly value: string | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function rawAttributes(message: Message): Map<string, Attribute> {
  const attributes = new Map<string, Attribute>();
  for (const [name, attribute] of Object.entries(message.MessageAttributes ?? {})) {
    attributes.set(name, { type: attribute.DataType ?? "", value: attribute.StringValue });
  }
  return attributes;
}

function envelopeAttributes(envelope: Record<string, unknown>): Map<string, Attribute> {
  const attributes = new Map<string, Attribute>();
  if (!isRecord(envelope.MessageAttributes)) return attributes;
  for (const [name, attribute] of Object.entries(envelope.MessageAttributes)) {
    if (!isRecord(attribute)) continue;
    attributes.set(name, {
      type: typeof attribute.Type === "string" ? attribute.Type : "",
      value: typeof attribute.Value === "string" ? attribute.Value : undefined,
    });
  }
  return attributes;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: describeError(error) };
  }
}

/** An SNS notification delivered without raw delivery: the relay's body is in `Message`. */
function isEnvelope(value: unknown): value is Record<string, unknown> & { Message: unknown } {
  return isRecord(value) && value.Type === "Notification" && "Message" in value && "TopicArn" in value;
}

function requiredString(
  attributes: Map<string, Attribute>,
  name: string,
  missing: "missing_event_id" | "missing_event_type",
): string | PoisonReason {
  const attribute = attributes.get(name);
  if (attribute === undefined || attribute.value === undefined || attribute.value === "") {
    return new PoisonReason(missing, `no "${name}" message attribute`);
  }
  // "String" or a custom "String.x" type; a Number or Binary id is not ours.
  if (attribute.type !== "String" && !attribute.type.startsWith("String.")) {
    return new PoisonReason("wrong_attribute_type", `"${name}" has type ${attribute.type || "(none)"}`);
  }
  return attribute.value;
}

/**
 * Decodes an SNS envelope or a raw delivery into the relay's event, or says why it is poison.
 * Never throws: a message we cannot read must be quarantined, not crash the loop.
 */
export function decodeMessage(message: Message): DecodedMessage | PoisonReason {
  const body = parseJson(message.Body ?? "");
  if (!body.ok) return new PoisonReason("body_not_json", body.error);

  let attributes: Map<string, Attribute>;
  let payload: unknown;
  if (isEnvelope(body.value)) {
    if (typeof body.value.Message !== "string") {
      return new PoisonReason("envelope_message_not_json", "envelope Message is not a string");
    }
    const inner = parseJson(body.value.Message);
    if (!inner.ok) return new PoisonReason("envelope_message_not_json", inner.error);
    attributes = envelopeAttributes(body.value);
    payload = inner.value;
  } else {
    attributes = rawAttributes(message);
    payload = body.value;
  }

  const eventId = requiredString(attributes, EVENT_ID_ATTRIBUTE, "missing_event_id");
  if (eventId instanceof PoisonReason) return eventId;
  if (!uuidPattern.test(eventId)) return new PoisonReason("invalid_event_id", `not a UUID: "${eventId}"`);
  const eventType = requiredString(attributes, EVENT_TYPE_ATTRIBUTE, "missing_event_type");
  if (eventType instanceof PoisonReason) return eventType;

  const headers: Record<string, string> = {};
  for (const [name, attribute] of attributes) {
    if (name === EVENT_ID_ATTRIBUTE || name === EVENT_TYPE_ATTRIBUTE || attribute.value === undefined)
      continue;
    if (attribute.type === "String" || attribute.type.startsWith("String.")) headers[name] = attribute.value;
  }
  return { eventId: eventId.toLowerCase(), eventType, payload, headers };
}
