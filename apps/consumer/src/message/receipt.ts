import type { Message } from "@aws-sdk/client-sqs";

/**
 * What the queue needs to act on a message we received (delete it, extend its lease, release it):
 * the receipt handle of this delivery, and the message id our logs name it by.
 */
export interface Receipt {
  readonly messageId: string;
  readonly receiptHandle: string;
}

export function receiptOf(message: Message): Receipt {
  return { messageId: message.MessageId ?? "", receiptHandle: message.ReceiptHandle ?? "" };
}

/** How many times SQS has handed this message out, this delivery included. */
export function receiveCountOf(message: Message): number {
  return Number(message.Attributes?.ApproximateReceiveCount ?? "1");
}
