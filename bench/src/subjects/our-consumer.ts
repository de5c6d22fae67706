import type { SQSClient } from "@aws-sdk/client-sqs";
import { createConsumer, defineBatchHandler, defineHandlers } from "@outbox/consumer";
import { type ExampleDatabase, exampleEffectRow } from "@outbox/example-handlers";
import { createLogger, createLongPollSqsClient, type DatabaseHandle } from "@outbox/shared";
import type { ConsumerJob } from "../jobs.js";
import { awsSettings, type Counter, type Subject, WAIT_TIME_SECONDS } from "./measure-subject.js";

function parseName(payload: unknown): { name: string } {
  const name = (payload as { name?: unknown } | null)?.name;
  if (typeof name !== "string" || name === "") throw new Error("name must be a non-empty string");
  return { name };
}

/** The same one-row effect as the example handlers (@outbox/example-handlers), one event per transaction. */
const perMessageHandlers = defineHandlers<{ "example.created": { name: string } }, ExampleDatabase>({
  "example.created": {
    parse: parseName,
    async handle(event, { trx }) {
      await trx.insertInto("example_effects").values(exampleEffectRow(event)).execute();
    },
  },
});

/** The same effect as a batch handler: up to 10 events, their inbox rows and effects in one transaction. */
const batchHandlers = defineHandlers<{ "example.created": { name: string } }, ExampleDatabase>({
  "example.created": defineBatchHandler({
    parse: parseName,
    async handleBatch(events, { trx }) {
      await trx.insertInto("example_effects").values(events.map(exampleEffectRow)).execute();
    },
  }),
});

/** Our consumer as a library (per-message or batch handlers, by the job's impl), counted from its own stats. */
export function ourConsumer(
  job: ConsumerJob,
  database: DatabaseHandle,
  sqs: SQSClient,
  counter: Counter,
): Subject & { duplicates(): number } {
  // As the daemon does: the long polls get a client of their own (see ConsumerOptions.receiveSqs).
  const receiveSqs = createLongPollSqsClient(
    awsSettings(job.aws.region, job.aws.sqsEndpoint, job.pollers),
    WAIT_TIME_SECONDS,
  );
  const consumer = createConsumer({
    handlers: job.impl === "ours-batch" ? batchHandlers : perMessageHandlers,
    pool: database.pool,
    sqs,
    receiveSqs,
    queueUrl: job.queueUrl,
    name: job.name,
    log: createLogger({ service: "bench", version: "0", level: "warn" }),
    pollers: job.pollers,
    concurrency: job.concurrency,
    waitTimeSeconds: WAIT_TIME_SECONDS,
  });
  let last = 0;
  // Every 20 ms, as often as the counter reports progress: the subject's CPU includes this timer, and
  // at 2 ms it woke the process 500 times a second, a sizeable part of a slow run's CPU per message.
  const poll = setInterval(() => {
    const processed = consumer.stats().processed;
    counter.add(processed - last);
    last = processed;
  }, 20);
  return {
    duplicates: () => consumer.stats().duplicates,
    start: () => consumer.start(),
    async stop() {
      clearInterval(poll);
      await consumer.drain();
      receiveSqs.destroy();
    },
  };
}
