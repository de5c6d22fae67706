import {
  type Message,
  type MessageAttributeValue,
  SendMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { EVENT_ID_ATTRIBUTE, EVENT_TYPE_ATTRIBUTE } from "@outbox/client";
import { MAX_MESSAGE_ATTRIBUTES } from "@outbox/client/internal";
import type { PoisonReason } from "../errors.js";
import { receiveCountOf } from "../message/receipt.js";

/** The attribute a quarantined message carries in the DLQ: why it was never processed. */
export const POISON_REASON_ATTRIBUTE = "poison_reason";
/**
 * The message's ApproximateReceiveCount in its queue when it was quarantined: the DLQ's copy is a new
 * message, whose own count starts again (`consumer dlq list` shows it as the attempts).
 */
export const POISON_RECEIVE_COUNT_ATTRIBUTE = "poison_receive_count";

const OWN_ATTRIBUTES = [POISON_REASON_ATTRIBUTE, POISON_RECEIVE_COUNT_ATTRIBUTE];
// SQS allows 10 message attributes; two are ours.
const MAX_COPIED_ATTRIBUTES = MAX_MESSAGE_ATTRIBUTES - OWN_ATTRIBUTES.length;

/** The event's identity first: if a header must stay behind, it is never the id or the type. */
function copiedFirst([name]: [string, unknown]): number {
  return name === EVENT_ID_ATTRIBUTE || name === EVENT_TYPE_ATTRIBUTE ? 0 : 1;
}

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
  const copied = Object.entries(message.MessageAttributes ?? {})
    .filter(([name]) => !OWN_ATTRIBUTES.includes(name))
    .sort((a, b) => copiedFirst(a) - copiedFirst(b))
    .slice(0, MAX_COPIED_ATTRIBUTES);
  for (const [name, value] of copied) attributes[name] = value;
  attributes[POISON_REASON_ATTRIBUTE] = {
    DataType: "String",
    // Short already: PoisonReason caps what the message itself put in it.
    StringValue: reason.toString(),
  };
  attributes[POISON_RECEIVE_COUNT_ATTRIBUTE] = {
    DataType: "Number",
    StringValue: String(receiveCountOf(message)),
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
