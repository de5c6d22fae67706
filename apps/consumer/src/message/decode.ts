import type { Message } from "@aws-sdk/client-sqs";
import { EVENT_ID_ATTRIBUTE, EVENT_TYPE_ATTRIBUTE } from "@outbox/client";
import { decodePointer, PAYLOAD_SIZE_ATTRIBUTES, type PayloadPointer } from "@outbox/client/internal";
import { PoisonReason } from "../errors.js";
import type { MessageDelivery } from "./delivery.js";
import { parseJson } from "./parse-json.js";

/** A message whose body and attributes make sense; which handler takes it is decided later. */
export interface DecodedMessage {
  readonly eventId: string;
  readonly eventType: string;
  readonly payload: unknown;
  readonly headers: Record<string, string>;
  /**
   * Where the payload is when the message is claim-checked (it has an `ExtendedPayloadSize` or
   * `SQSLargePayloadSize` attribute): `payload` is then the pointer, and fetchClaimedPayload
   * replaces it with the object's JSON before any handler sees it.
   */
  readonly claimed?: PayloadPointer;
  /** The payload's size in bytes, as the claim-checked message declares it: what its object must hold. */
  readonly claimedBytes?: number;
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

/** Looks like an SNS notification: enough to say why a raw delivery without attributes is poison. */
function looksLikeNotification(value: unknown): boolean {
  return isRecord(value) && value.Type === "Notification";
}

/** The fields every SNS notification carries, as strings; `Message` is the relay's body. */
const ENVELOPE_FIELDS = ["MessageId", "TopicArn", "Message", "Timestamp"] as const;

function envelopeAttributes(envelope: Record<string, unknown>): Map<string, Attribute> | PoisonReason {
  const attributes = new Map<string, Attribute>();
  if (envelope.MessageAttributes === undefined) return attributes;
  if (!isRecord(envelope.MessageAttributes)) {
    return new PoisonReason("not_an_envelope", "MessageAttributes is not an object");
  }
  for (const [name, attribute] of Object.entries(envelope.MessageAttributes)) {
    // SNS writes every attribute, Binary ones base64-encoded, as {"Type": "…", "Value": "…"}.
    if (!isRecord(attribute) || typeof attribute.Type !== "string" || typeof attribute.Value !== "string") {
      return new PoisonReason(
        "not_an_envelope",
        `message attribute without a string Type and Value: ${name}`,
      );
    }
    attributes.set(name, { type: attribute.Type, value: attribute.Value });
  }
  return attributes;
}

/**
 * The relay's body and attributes out of an SNS notification, if it is a well-formed one from an
 * allowed topic. The emulator and SQS subscriptions do not sign for the consumer to check: what keeps
 * others from writing such a body is the queue policy (only the topic may send) and this list.
 */
function unwrapEnvelope(
  value: unknown,
  topicArns: ReadonlySet<string>,
): { attributes: Map<string, Attribute>; payload: unknown } | PoisonReason {
  if (!isRecord(value))
    return new PoisonReason("not_an_envelope", "the body is not an SNS notification object");
  if (value.Type !== "Notification") {
    return new PoisonReason(
      "not_an_envelope",
      `Type is not "Notification": ${JSON.stringify(value.Type) ?? "none"}`,
    );
  }
  for (const field of ENVELOPE_FIELDS) {
    if (typeof value[field] !== "string" || value[field] === "") {
      return new PoisonReason("not_an_envelope", `no ${field} string`);
    }
  }
  const topicArn = value.TopicArn as string;
  if (!topicArns.has(topicArn)) {
    return new PoisonReason("topic_not_allowed", `TopicArn is not in CONSUMER_TOPIC_ARNS: ${topicArn}`);
  }
  const attributes = envelopeAttributes(value);
  if (attributes instanceof PoisonReason) return attributes;
  const inner = parseJson(value.Message as string);
  if (!inner.ok) return new PoisonReason("envelope_message_not_json", inner.error);
  return { attributes, payload: inner.value };
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
 * Decodes a delivery into the relay's event, or says why it is poison. The SQS message attributes,
 * when they carry an event id, are the message's identity: nothing in a body overrides them. A body
 * is unwrapped only with envelope delivery and only when it is a well-formed notification of an
 * allowed topic; with raw delivery a body that merely looks like one is a payload like any other.
 * Never throws: a message we cannot read must be quarantined, not crash the loop.
 */
export function decodeMessage(message: Message, delivery: MessageDelivery): DecodedMessage | PoisonReason {
  const body = parseJson(message.Body ?? "");
  if (!body.ok) return new PoisonReason("body_not_json", body.error);

  let attributes = rawAttributes(message);
  let payload: unknown = body.value;
  if (delivery.mode === "envelope" && !attributes.has(EVENT_ID_ATTRIBUTE)) {
    const unwrapped = unwrapEnvelope(body.value, delivery.topicArns);
    if (unwrapped instanceof PoisonReason) return unwrapped;
    ({ attributes, payload } = unwrapped);
  }

  const eventId = requiredString(attributes, EVENT_ID_ATTRIBUTE, "missing_event_id");
  if (eventId instanceof PoisonReason) {
    if (eventId.kind === "missing_event_id" && delivery.mode === "raw" && looksLikeNotification(body.value)) {
      return new PoisonReason(
        "missing_event_id",
        `${eventId.detail}, and the body is an SNS notification: with CONSUMER_DELIVERY=raw it is not unwrapped (is raw delivery off on the subscription?)`,
      );
    }
    return eventId;
  }
  if (!uuidPattern.test(eventId)) return new PoisonReason("invalid_event_id", `not a UUID: "${eventId}"`);
  const eventType = requiredString(attributes, EVENT_TYPE_ATTRIBUTE, "missing_event_type");
  if (eventType instanceof PoisonReason) return eventType;

  const headers: Record<string, string> = {};
  for (const [name, attribute] of attributes) {
    if (name === EVENT_ID_ATTRIBUTE || name === EVENT_TYPE_ATTRIBUTE || attribute.value === undefined)
      continue;
    if (PAYLOAD_SIZE_ATTRIBUTES.includes(name)) continue;
    if (attribute.type === "String" || attribute.type.startsWith("String.")) headers[name] = attribute.value;
  }
  const decoded = { eventId: eventId.toLowerCase(), eventType, payload, headers };
  // Marked by the attribute's name whatever its type, as the extended clients read it: they write
  // it as Number, our relay as String.
  const sizeAttribute = PAYLOAD_SIZE_ATTRIBUTES.find((name) => attributes.has(name));
  if (sizeAttribute === undefined) return decoded;
  const claimed = decodePointer(payload);
  if (typeof claimed === "string") {
    return new PoisonReason("invalid_claim_pointer", `claim-checked message, but ${claimed}`);
  }
  const declared = attributes.get(sizeAttribute)?.value ?? "";
  if (!/^\d{1,15}$/.test(declared)) {
    return new PoisonReason(
      "invalid_claim_pointer",
      `claim-checked message, but ${sizeAttribute} is not a byte count: "${declared}"`,
    );
  }
  return { ...decoded, claimed, claimedBytes: Number(declared) };
}
