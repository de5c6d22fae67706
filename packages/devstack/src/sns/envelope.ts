import { randomUUID } from "node:crypto";
import type { MessageAttribute, PreparedMessage } from "./message.js";
import type { Topic } from "./registry.js";

/** A message after SNS accepted it: what subscribers receive. */
export interface PublishedMessage extends PreparedMessage {
  readonly messageId: string;
  readonly sequenceNumber: string | undefined;
  readonly timestamp: Date;
  readonly topicArn: string;
}

// Consumers parse this string, so the placeholders must look like the real thing (base64,
// https URLs) even though nobody can verify them: the emulator does not sign.
const FAKE_SIGNATURE = Buffer.from("local-sns-emulator-does-not-sign").toString("base64");

function envelopeAttributes(attributes: MessageAttribute[]): Record<string, { Type: string; Value: string }> {
  const out: Record<string, { Type: string; Value: string }> = {};
  for (const a of attributes) out[a.name] = { Type: a.dataType, Value: a.binaryValue ?? a.stringValue ?? "" };
  return out;
}

/** The JSON document SNS delivers to an SQS subscription without raw delivery. */
export function notificationEnvelope(
  published: PublishedMessage,
  region: string,
  unsubscribeUrl: string,
): string {
  return JSON.stringify({
    Type: "Notification",
    MessageId: published.messageId,
    ...(published.sequenceNumber ? { SequenceNumber: published.sequenceNumber } : {}),
    TopicArn: published.topicArn,
    ...(published.subject !== undefined ? { Subject: published.subject } : {}),
    Message: published.message,
    Timestamp: published.timestamp.toISOString(),
    SignatureVersion: "1",
    Signature: FAKE_SIGNATURE,
    SigningCertURL: `https://sns.${region}.amazonaws.com/SimpleNotificationService-local.pem`,
    UnsubscribeURL: unsubscribeUrl,
    ...(published.attributes.length > 0
      ? { MessageAttributes: envelopeAttributes(published.attributes) }
      : {}),
  });
}

/** Stamps an accepted message with its id, time and (FIFO) sequence number. */
export function acceptMessage(topic: Topic, prepared: PreparedMessage): PublishedMessage {
  let sequenceNumber: string | undefined;
  if (topic.fifo) {
    sequenceNumber = String(topic.nextSequence);
    topic.nextSequence += 1n;
  }
  return { ...prepared, messageId: randomUUID(), sequenceNumber, timestamp: new Date(), topicArn: topic.arn };
}
