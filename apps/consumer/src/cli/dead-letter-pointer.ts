import type { Message } from "@aws-sdk/client-sqs";
import { claimCheckPointer, type PayloadPointer } from "@outbox/client/internal";

/** The SNS notification a body is, with envelope delivery; undefined for any other body. */
function notification(body: string | undefined): Record<string, unknown> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body ?? "");
  } catch {
    return undefined;
  }
  const isNotification =
    typeof parsed === "object" && parsed !== null && (parsed as { Type?: unknown }).Type === "Notification";
  return isNotification ? (parsed as Record<string, unknown>) : undefined;
}

/**
 * The claim-check pointer a dead letter carries, or undefined: its body with raw delivery (the size
 * attribute on the SQS message), or its SNS notification's `Message` with envelope delivery (the
 * attribute in the notification). The DLQ commands do not know the delivery, so both are looked at.
 * A body that does not decode as a pointer is not looked into further: the consumer poisons it
 * again, as it did before.
 */
export function deadLetterPointer(message: Message): PayloadPointer | undefined {
  const raw = claimCheckPointer(message.MessageAttributes, message.Body);
  if (raw !== undefined) return raw;
  const envelope = notification(message.Body);
  return envelope === undefined ? undefined : claimCheckPointer(envelope.MessageAttributes, envelope.Message);
}
