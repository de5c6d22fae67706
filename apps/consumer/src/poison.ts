import {
  type Message,
  type MessageAttributeValue,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import type { PoisonReason } from "./errors.js";

/** The attribute a quarantined message carries in the DLQ: why it was never processed. */
export const POISON_REASON_ATTRIBUTE = "poison_reason";

// SQS allows 10 message attributes; one is ours.
const MAX_COPIED_ATTRIBUTES = 9;

/**
 * Moves a poison message to the DLQ right away, with the reason attached, instead of letting it
 * burn its receives against the redrive policy: retrying cannot fix a message we cannot read.
 * Sends the copy only; the caller deletes the original once this resolves (a crash in between
 * leaves a second copy in a standard DLQ, never a lost message).
 *
 * A FIFO DLQ (URL ending in `.fifo`) gets the message's own group (its MessageGroupId, received on
 * FIFO queues; else its MessageId) and its MessageId as the deduplication id: a second send of the
 * same message within SQS's 5-minute deduplication window, e.g. after that crash, is dropped.
 */
export async function sendToDeadLetterQueue(
  sqs: SQSClient,
  dlqUrl: string,
  message: Message,
  reason: PoisonReason,
): Promise<void> {
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {}).slice(
    0,
    MAX_COPIED_ATTRIBUTES,
  )) {
    if (name !== POISON_REASON_ATTRIBUTE) attributes[name] = value;
  }
  attributes[POISON_REASON_ATTRIBUTE] = {
    DataType: "String",
    // Short already: PoisonReason caps what the message itself put in it.
    StringValue: reason.toString(),
  };
  const fifo = dlqUrl.endsWith(".fifo");
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: dlqUrl,
      // An empty body is not allowed by SQS; keep the evidence readable.
      MessageBody: message.Body || "(empty body)",
      MessageAttributes: attributes,
      MessageGroupId: fifo ? (message.Attributes?.MessageGroupId ?? message.MessageId) : undefined,
      MessageDeduplicationId: fifo ? message.MessageId : undefined,
    }),
  );
}
