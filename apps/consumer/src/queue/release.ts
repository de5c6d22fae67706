import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import { MAX_BATCH_ENTRIES } from "@outbox/client/internal";
import type { Receipt } from "../message/receipt.js";

// One verb for handing a message back to the queue before its lease runs out: release. A release
// changes the message's visibility (ChangeMessageVisibility); the queue hands it out again after it.

/**
 * Releases messages: visible again after `visibilitySeconds`, at once by default, e.g. those a
 * long poll returned after the drain ran out of time: another consumer takes them now instead of
 * after the visibility timeout. 10 a call, in order.
 * Returns how many SQS accepted; a refused change only costs the rest of the lease.
 */
export async function releaseMessages(
  sqs: SQSClient,
  queueUrl: string,
  messages: readonly Receipt[],
  visibilitySeconds = 0,
): Promise<number> {
  let changed = 0;
  for (let start = 0; start < messages.length; start += MAX_BATCH_ENTRIES) {
    const chunk = messages.slice(start, start + MAX_BATCH_ENTRIES);
    const output = await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: chunk.map((message, index) => ({
          Id: String(index),
          ReceiptHandle: message.receiptHandle,
          VisibilityTimeout: visibilitySeconds,
        })),
      }),
    );
    changed += output.Successful?.length ?? 0;
  }
  return changed;
}

/** Releases a failed message after its retry delay; the receipt handle stays valid until then. */
export async function releaseForRetry(
  sqs: SQSClient,
  queueUrl: string,
  message: Receipt,
  delaySeconds: number,
): Promise<void> {
  await sqs.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: queueUrl,
      ReceiptHandle: message.receiptHandle,
      VisibilityTimeout: delaySeconds,
    }),
  );
}
