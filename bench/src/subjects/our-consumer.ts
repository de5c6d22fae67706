import type { SQSClient } from "@aws-sdk/client-sqs";
import { createConsumer, defineHandlers, type ExampleDatabase } from "@outbox/consumer";
import { createLogger, type DatabaseHandle } from "@outbox/shared";
import type { ConsumerJob } from "../jobs.js";
import type { Counter, Subject } from "./measure-subject.js";

const benchHandlers = defineHandlers<{ "example.created": { name: string } }, ExampleDatabase>({
  "example.created": {
    parse: (payload) => {
      const name = (payload as { name?: unknown } | null)?.name;
      if (typeof name !== "string" || name === "") throw new Error("name must be a non-empty string");
      return { name };
    },
    // The same one-row effect as apps/consumer/src/example-handlers.ts.
    async handle(event, { trx }) {
      await trx
        .insertInto("example_effects")
        .values({ event_id: event.id, event_type: event.type, payload: JSON.stringify(event.payload) })
        .execute();
    },
  },
});

/** Our consumer as a library, counted from its own stats. */
export function ourConsumer(
  job: ConsumerJob,
  database: DatabaseHandle,
  sqs: SQSClient,
  counter: Counter,
): Subject & { duplicates(): number } {
  const consumer = createConsumer({
    handlers: benchHandlers,
    pool: database.pool,
    sqs,
    queueUrl: job.queueUrl,
    name: job.name,
    log: createLogger({ service: "bench", version: "0", level: "warn" }),
    pollers: job.pollers,
    concurrency: job.concurrency,
    waitTimeSeconds: 1,
  });
  let last = 0;
  const poll = setInterval(() => {
    const processed = consumer.stats().processed;
    counter.add(processed - last);
    last = processed;
  }, 2);
  return {
    duplicates: () => consumer.stats().duplicates,
    start: () => consumer.start(),
    async stop() {
      clearInterval(poll);
      await consumer.drain();
    },
  };
}
