import type { SQSClient } from "@aws-sdk/client-sqs";
import type { DatabaseHandle } from "@outbox/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { awsClients } from "../../../test/support/aws.js";
import exampleHandlers from "../src/example-handlers.js";
import { createConsumer, defineHandlers } from "../src/index.js";
import {
  effectCount,
  envelopeBody,
  exampleEvent,
  migratedDatabase,
  queueDepth,
  queueFor,
  sendBody,
  sendRaw,
  testLogger,
} from "./harness.js";

let sqs: SQSClient;
let database: DatabaseHandle;

beforeAll(async () => {
  ({ sqs } = awsClients());
  ({ database } = await migratedDatabase("consumer_once"));
});

afterAll(async () => {
  sqs.destroy();
  await database.close(5_000);
});

describe("exactly-once effects", () => {
  it("applies an event delivered twice (re-published with a new MessageId) once and counts one duplicate", async () => {
    const queue = await queueFor("once");
    const event = exampleEvent("twice");
    const other = exampleEvent("once");
    // First delivery raw, the re-publish as an SNS envelope: the dedup key is the event id in both.
    await sendRaw(sqs, queue.queueUrl, [event, other]);
    await sendBody(
      sqs,
      queue.queueUrl,
      envelopeBody({ ...event, headers: { traceparent: "00-abc-def-01" } }),
    );

    const consumer = createConsumer({
      handlers: exampleHandlers,
      pool: database.pool,
      sqs,
      queueUrl: queue.queueUrl,
      name: "once",
      log: testLogger(),
      waitTimeSeconds: 1,
      // One at a time, so the duplicate arrives after the first delivery committed.
      concurrency: 1,
    });
    consumer.start();
    await expect
      .poll(() => consumer.stats().processed + consumer.stats().duplicates, { timeout: 20_000 })
      .toBe(3);
    const summary = await consumer.drain();

    expect(summary).toMatchObject({ clean: true, processed: 2, duplicates: 1, poison: 0, failed: 0 });
    expect(await effectCount(database)).toBe(2);
    const inbox = await database.db.selectFrom("inbox").selectAll().where("consumer", "=", "once").execute();
    expect(inbox.map((row) => row.event_id).sort()).toEqual([event.id, other.id].sort());
    expect(await queueDepth(sqs, queue.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it("keeps the transaction to itself: a handler cannot commit the inbox row early", async () => {
    const queue = await queueFor("own-trx");
    const event = exampleEvent("nested");
    const handlers = defineHandlers<{ "example.created": { name: string } }>({
      "example.created": async (received, { trx }) => {
        await trx.transaction().execute(async (inner) => {
          await inner
            .insertInto("example_effects")
            .values({ event_id: received.id, event_type: received.type, payload: "{}" })
            .execute();
        });
      },
    });
    await sendRaw(sqs, queue.queueUrl, [event]);
    const consumer = createConsumer({
      handlers,
      pool: database.pool,
      sqs,
      queueUrl: queue.queueUrl,
      name: "own-trx",
      log: testLogger(),
      waitTimeSeconds: 1,
      retryBaseSeconds: 60,
    });
    consumer.start();
    await expect.poll(() => consumer.stats().failed, { timeout: 10_000 }).toBe(1);
    await consumer.drain();
    const rows = await database.db
      .selectFrom("example_effects")
      .select("event_id")
      .where("event_id", "=", event.id)
      .execute();
    expect(rows).toEqual([]);
    const inbox = await database.db
      .selectFrom("inbox")
      .select("event_id")
      .where("consumer", "=", "own-trx")
      .execute();
    expect(inbox).toEqual([]);
  });
});
