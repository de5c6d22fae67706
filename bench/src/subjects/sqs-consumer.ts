import type { Message, SQSClient } from "@aws-sdk/client-sqs";
import { EVENT_ID_ATTRIBUTE, EVENT_TYPE_ATTRIBUTE } from "@outbox/client";
import type { DatabaseHandle } from "@outbox/shared";
import { Consumer as SqsConsumer } from "sqs-consumer";
import { emit } from "../child.js";
import type { ConsumerJob } from "../jobs.js";
import { type Counter, type Subject, WAIT_TIME_SECONDS } from "./measure-subject.js";

/** sqs-consumer 14 with the same inbox transaction in its handler: claim, effect, commit. */
export function sqsConsumer(
  job: ConsumerJob,
  database: DatabaseHandle,
  sqs: SQSClient,
  counter: Counter,
): Subject & { duplicates(): number } {
  let dups = 0;
  const inbox = async (message: Message): Promise<boolean> => {
    const eventId = message.MessageAttributes?.[EVENT_ID_ATTRIBUTE]?.StringValue;
    const eventType = message.MessageAttributes?.[EVENT_TYPE_ATTRIBUTE]?.StringValue ?? "unknown";
    const client = await database.pool.connect();
    try {
      await client.query("BEGIN");
      const claim = await client.query(
        `INSERT INTO inbox (consumer, event_id, message_id) VALUES ($1, $2, $3)
         ON CONFLICT (consumer, event_id) DO NOTHING RETURNING event_id`,
        [job.name, eventId, message.MessageId],
      );
      if (claim.rowCount === 0) {
        await client.query("ROLLBACK");
        dups += 1;
        return true;
      }
      await client.query("INSERT INTO example_effects (event_id, event_type, payload) VALUES ($1, $2, $3)", [
        eventId,
        eventType,
        message.Body,
      ]);
      await client.query("COMMIT");
      counter.add();
      return true;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  };
  const { instances, batchSize } = {
    instances: job.pollers,
    batchSize: Math.min(10, Math.ceil(job.concurrency / job.pollers)),
  };
  const consumers = Array.from({ length: instances }, () =>
    SqsConsumer.create({
      queueUrl: job.queueUrl,
      sqs,
      batchSize,
      waitTimeSeconds: WAIT_TIME_SECONDS,
      messageAttributeNames: ["All"],
      ...(job.readmeShutdown ? { pollingCompleteWaitTimeMs: 10_000 } : {}),
      ...(job.impl === "sqs-consumer-batch"
        ? {
            handleMessageBatch: async (messages: Message[]) => {
              const results = await Promise.allSettled(messages.map(inbox));
              return messages.filter((_, i) => results[i]?.status === "fulfilled");
            },
          }
        : {
            handleMessage: async (message: Message) => {
              await inbox(message);
              return message;
            },
          }),
    }),
  );
  for (const consumer of consumers) {
    consumer.on("error", (error) => void emit({ t: "log", msg: `sqs-consumer error: ${error.message}` }));
    consumer.on(
      "processing_error",
      (error) => void emit({ t: "log", msg: `sqs-consumer processing_error: ${error.message}` }),
    );
  }
  if (job.readmeShutdown) {
    // Its README's graceful shutdown, verbatim in substance: stop(), exit(0) on `stopped`.
    const shutdown = () => {
      for (const consumer of consumers) consumer.stop();
      let stopped = 0;
      for (const consumer of consumers)
        consumer.once("stopped", () => {
          stopped += 1;
          if (stopped === consumers.length) process.exit(0);
        });
    };
    process.once("SIGTERM", shutdown);
    process.once("SIGINT", shutdown);
  }
  return {
    duplicates: () => dups,
    start() {
      for (const consumer of consumers) consumer.start();
    },
    async stop() {
      for (const consumer of consumers) consumer.stop();
      await new Promise((resolve) => setTimeout(resolve, 1_100));
    },
  };
}
