import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { MAX_BATCH_ENTRIES } from "@outbox/client/internal";
import type { ConsumerJob } from "../jobs.js";
import { type Counter, type Subject, WAIT_TIME_SECONDS } from "./measure-subject.js";

/**
 * No consumer at all: `pollers` loops of ReceiveMessage (10, fewer below concurrency 10, as the
 * consumers ask for) then DeleteMessageBatch, on the same client, with no Postgres and no handler.
 * What the SQS server and the SDK allow by themselves, the ceiling any consumer on this machine works
 * under, and the floor of its CPU per message.
 */
export function bareSdkConsumer(job: ConsumerJob, sqs: SQSClient, counter: Counter): Subject {
  let running = true;
  async function loop(): Promise<void> {
    while (running) {
      const { Messages: messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: job.queueUrl,
          MaxNumberOfMessages: Math.min(MAX_BATCH_ENTRIES, job.concurrency),
          WaitTimeSeconds: WAIT_TIME_SECONDS,
          MessageAttributeNames: ["All"],
        }),
      );
      if (messages.length === 0) continue;
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: job.queueUrl,
          Entries: messages.map((message, index) => ({
            Id: String(index),
            ReceiptHandle: message.ReceiptHandle,
          })),
        }),
      );
      counter.add(messages.length);
    }
  }
  let loops: Promise<unknown> = Promise.resolve();
  return {
    start() {
      loops = Promise.all(Array.from({ length: job.pollers }, loop));
    },
    async stop() {
      running = false;
      await loops;
    },
  };
}
