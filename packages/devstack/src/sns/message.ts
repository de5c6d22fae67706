import { createHash } from "node:crypto";
import { invalidParameter } from "./errors.js";
import { topicMessageLimit } from "./message-size.js";
import { type QueryParams, queryStructMap } from "./query.js";
import type { Topic } from "./registry.js";

export interface MessageAttribute {
  readonly name: string;
  readonly dataType: string;
  readonly stringValue?: string;
  /** Base64, exactly as it travels on the wire and in the notification envelope. */
  readonly binaryValue?: string;
}

/** A validated message, ready to be numbered and fanned out. */
export interface PreparedMessage {
  readonly message: string;
  readonly subject: string | undefined;
  readonly attributes: MessageAttribute[];
  readonly groupId: string | undefined;
  readonly deduplicationId: string | undefined;
  readonly bytes: number;
}

/** The string value of message attribute `name`, if the message has it. */
export function eventId(message: PreparedMessage, name: string): string | undefined {
  for (const a of message.attributes) if (a.name === name) return a.stringValue ?? a.binaryValue;
  return undefined;
}

const ATTRIBUTE_TYPE = /^(String|Number|Binary)(\..+)?$/;

function parseAttributes(params: QueryParams): MessageAttribute[] {
  return queryStructMap(params, "MessageAttributes").map(([name, value]) => {
    const dataType = value.get("DataType");
    if (!name || name.length > 256 || /^(aws|amazon)\./i.test(name)) {
      throw invalidParameter(`MessageAttributes: invalid attribute name '${name}'`);
    }
    if (!dataType || !ATTRIBUTE_TYPE.test(dataType)) {
      throw invalidParameter(`MessageAttributes: attribute '${name}' has an invalid DataType`);
    }
    const stringValue = value.get("StringValue");
    const binaryValue = value.get("BinaryValue");
    const present = dataType.startsWith("Binary") ? binaryValue : stringValue;
    if (!present) throw invalidParameter(`MessageAttributes: attribute '${name}' must have a value`);
    return dataType.startsWith("Binary") ? { name, dataType, binaryValue } : { name, dataType, stringValue };
  });
}

function attributeBytes(attribute: MessageAttribute): number {
  const value = attribute.binaryValue
    ? Buffer.from(attribute.binaryValue, "base64").length
    : Buffer.byteLength(attribute.stringValue ?? "");
  return Buffer.byteLength(attribute.name) + Buffer.byteLength(attribute.dataType) + value;
}

/** With `MessageStructure=json` the message holds one text per protocol; queues get `sqs` or `default`. */
function selectMessage(raw: string, structure: string | undefined): string {
  if (structure === undefined) return raw;
  if (structure !== "json") throw invalidParameter("MessageStructure");
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw invalidParameter("Message Structure - JSON message body failed to parse");
  }
  const perProtocol = parsed as Record<string, unknown>;
  if (typeof perProtocol.default !== "string") {
    throw invalidParameter("Message Structure - No default entry in JSON message body");
  }
  return typeof perProtocol.sqs === "string" ? perProtocol.sqs : perProtocol.default;
}

/** FIFO rules apply to the whole request: PublishBatch rejects it rather than failing entries. */
export function checkFifoParameters(topic: Topic, params: QueryParams): void {
  if (topic.fifo) {
    if (!params.get("MessageGroupId")) {
      throw invalidParameter("The MessageGroupId parameter is required for FIFO topics");
    }
    if (!params.get("MessageDeduplicationId") && topic.attributes.ContentBasedDeduplication !== "true") {
      throw invalidParameter(
        "The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
      );
    }
  } else if (params.get("MessageDeduplicationId") !== undefined) {
    throw invalidParameter(
      "MessageDeduplicationId Reason: The request includes MessageDeduplicationId parameter that is not valid for this topic type",
    );
  }
}

/** Validates one Publish request (or one PublishBatch entry) the way SNS does for this topic. */
export function prepareMessage(topic: Topic, params: QueryParams): PreparedMessage {
  const raw = params.get("Message");
  if (!raw) throw invalidParameter("Empty message");
  const message = selectMessage(raw, params.get("MessageStructure"));
  const subject = params.get("Subject");
  if (subject !== undefined && (subject.length === 0 || subject.length > 100 || /[\r\n]/.test(subject))) {
    throw invalidParameter("Subject");
  }
  const attributes = parseAttributes(params);
  const bytes = attributes.reduce((sum, a) => sum + attributeBytes(a), Buffer.byteLength(raw));
  if (bytes > topicMessageLimit(topic)) throw invalidParameter("Message too long");

  checkFifoParameters(topic, params);
  const groupId = params.get("MessageGroupId");
  const deduplicationId =
    topic.fifo && !params.get("MessageDeduplicationId")
      ? createHash("sha256").update(message).digest("hex")
      : params.get("MessageDeduplicationId");
  return { message, subject, attributes, groupId, deduplicationId, bytes };
}
