import type { Message } from "@aws-sdk/client-sqs";
import { decodePointer, PAYLOAD_SIZE_ATTRIBUTES, type PayloadPointer } from "@outbox/client/internal";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parsed(text: unknown): unknown {
  if (typeof text !== "string") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const marksClaimCheck = (attributes: unknown) =>
  isRecord(attributes) && PAYLOAD_SIZE_ATTRIBUTES.some((name) => Object.hasOwn(attributes, name));

/**
 * The claim-check pointer a dead letter carries, or undefined: its body with raw delivery (the size
 * attribute on the SQS message), or its SNS notification's `Message` with envelope delivery (the
 * attribute in the notification). The DLQ commands do not know the delivery, so both are looked at.
 * A body that does not decode as a pointer is not looked into further: the consumer poisons it
 * again, as it did before.
 */
export function deadLetterPointer(message: Message): PayloadPointer | undefined {
  const body = parsed(message.Body);
  let carried: unknown;
  if (marksClaimCheck(message.MessageAttributes)) carried = body;
  else if (isRecord(body) && body.Type === "Notification" && marksClaimCheck(body.MessageAttributes)) {
    carried = parsed(body.Message);
  }
  if (carried === undefined) return undefined;
  const pointer = decodePointer(carried);
  return typeof pointer === "string" ? undefined : pointer;
}
