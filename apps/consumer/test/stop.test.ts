import { performance } from "node:perf_hooks";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { type DatabaseHandle, sleep } from "@outbox/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { awsClients } from "../../../test/support/aws.js";
import exampleHandlers from "../src/example-handlers.js";
import { createConsumer, defineHandlers } from "../src/index.js";
import { exampleEvent, migratedDatabase, queueDepth, queueFor, sendRaw, testLogger } from "./harness.js";

let sqs: SQSClient;
let database: DatabaseHandle;

beforeAll(async () => {
  ({ sqs } = awsClients());
  ({ database } = await migratedDatabase("consumer_stop"));
});

afterAll(async () => {
  sqs.destroy();
  await database.close(5_000);
});

describe("stopping", () => {
  it("does not abort a long poll open at the stop; what it returns too late for the drain is released at once", async () => {
    const queue = await queueFor("late-poll");
    const consumer = createConsumer({
      handlers: exampleHandlers,
      pool: database.pool,
      sqs,
      queueUrl: queue.queueUrl,
      name: "late-poll",
      log: testLogger(),
      pollers: 1,
      waitTimeSeconds: 2,
      // Roomy for a busy machine: the poll returns ~1.5 s into a 4 s drain, leaving < 3.5 s.
      drainTimeoutMs: 4_000,
      visibilityMarginMs: 3_500,
    });
    consumer.start();
    await sleep(200); // the poll is open and waiting
    // local-aws-sqs holds a partial batch until the wait ends: the poll takes these and returns ~1.8 s later.
    await sendRaw(sqs, queue.queueUrl, [exampleEvent("a"), exampleEvent("b"), exampleEvent("c")]);
    await sleep(300);
    const started = performance.now();
    const summary = await consumer.drain();
    // It waited for the poll (not aborted), then had < 3.5 s left: released instead of processed.
    expect(performance.now() - started).toBeGreaterThan(1_000);
    expect(summary).toMatchObject({ clean: true, processed: 0, released: 3 });
    expect(await queueDepth(sqs, queue.queueUrl)).toEqual({ visible: 3, inFlight: 0 });
  });

  it("when the drain deadline passes, rolls back what is still running and releases it", async () => {
    const queue = await queueFor("drain-expired");
    const handlers = defineHandlers<{ "example.created": { name: string } }>({
      "example.created": async (event, { trx }) => {
        await trx
          .insertInto("example_effects")
          .values({ event_id: event.id, event_type: event.type, payload: "{}" })
          .execute();
        await sleep(3_000);
      },
    });
    const consumer = createConsumer({
      handlers,
      pool: database.pool,
      sqs,
      queueUrl: queue.queueUrl,
      name: "drain-expired",
      log: testLogger(),
      waitTimeSeconds: 0,
      drainTimeoutMs: 500,
    });
    const event = exampleEvent("slow");
    await sendRaw(sqs, queue.queueUrl, [event]);
    consumer.start();
    await expect.poll(() => consumer.inFlight().messages, { timeout: 5_000 }).toBe(1);
    const started = performance.now();
    const summary = await consumer.drain();
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(summary).toMatchObject({ clean: false, processed: 0, released: 1, failed: 0 });
    const rows = await database.db
      .selectFrom("example_effects")
      .select("event_id")
      .where("event_id", "=", event.id)
      .execute();
    expect(rows).toEqual([]);
    expect(await queueDepth(sqs, queue.queueUrl)).toEqual({ visible: 1, inFlight: 0 });
  });
});
