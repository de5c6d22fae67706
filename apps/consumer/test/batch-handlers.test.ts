import { randomUUID } from "node:crypto";
import { type ExampleDatabase, exampleEffectRow } from "@outbox/example-handlers";
import { sleep } from "@outbox/shared";
import { capturingLogger, drainQueue, queueDepth } from "@outbox/test-kit";
import { describe, expect, it } from "vitest";
import { type ConsumedEvent, defineBatchHandler, defineHandlers, PoisonMessageError } from "../src/index.js";
import { effectCount, exampleEvent, inboxRowsOf, queueFor, sendRaw, useConsumerTestBed } from "./harness.js";

const bed = useConsumerTestBed("consumer_batches");

type ExampleCreated = ConsumedEvent<"example.created", { name: string }>;

/** Batch handlers writing one effect per event; `onBatch` sees each batch before its writes. */
function batchHandlers(onBatch: (events: readonly ExampleCreated[]) => Promise<void> | void) {
  return defineHandlers<{ "example.created": { name: string } }, ExampleDatabase>({
    "example.created": defineBatchHandler({
      async handleBatch(events, { trx }) {
        await onBatch(events);
        await trx.insertInto("example_effects").values(events.map(exampleEffectRow)).execute();
      },
    }),
  });
}

describe("batch handlers", () => {
  it("isolate one poison message of a batch of 10: 9 effects once, 1 in the DLQ", async () => {
    const queue = await queueFor("batch-poison");
    const batchSizes: number[] = [];
    const handlers = batchHandlers((events) => {
      batchSizes.push(events.length);
      if (events.some((event) => event.payload.name === "poison")) {
        throw new PoisonMessageError("poison is not a name");
      }
    });
    const events = Array.from({ length: 10 }, (_, index) =>
      exampleEvent(index === 4 ? "poison" : `good-${index}`),
    );
    await sendRaw(bed.sqs, queue.queueUrl, events);
    const { written: lines, log } = capturingLogger();
    const consumer = bed.consumer(queue, {
      handlers,
      dlqUrl: queue.dlqUrl,
      name: "batch-poison",
      pollers: 1,
      waitTimeSeconds: 1,
      log,
    });
    consumer.start();
    await expect
      .poll(() => consumer.stats().processed + consumer.stats().poison, { timeout: 15_000 })
      .toBe(10);
    const summary = await consumer.drain();
    expect(summary).toMatchObject({ clean: true, processed: 9, poison: 1, duplicates: 0 });
    // A batch of more than one formed and failed, and the fallback ran every message on its own.
    expect(Math.max(...batchSizes)).toBeGreaterThan(1);
    expect(lines.some((line) => line.includes("batch failed; handling its messages one at a time"))).toBe(
      true,
    );
    expect(await effectCount(bed.database)).toBe(9);
    const committed = new Set((await inboxRowsOf(bed.database, "batch-poison")).map((row) => row.event_id));
    expect(committed).toEqual(new Set(events.filter((_, index) => index !== 4).map((event) => event.id)));
    const dead = await drainQueue(bed.sqs, queue.dlqUrl);
    expect(dead.map((message) => message.attributes.poison_reason?.split(":")[0])).toEqual([
      "rejected_by_handler",
    ]);
    expect(dead.map((message) => message.attributes.event_id)).toEqual([events[4]?.id]);
    expect(await queueDepth(bed.sqs, queue.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it("never show the handler an event processed before, or a second copy of one in the same receive", async () => {
    const queue = await queueFor("batch-duplicates");
    const fresh = Array.from({ length: 5 }, (_, index) => exampleEvent(`fresh-${index}`));
    const old = Array.from({ length: 3 }, (_, index) => exampleEvent(`old-${index}`));
    await bed.database.db
      .insertInto("inbox")
      .values(
        old.map((event) => ({ consumer: "batch-duplicates", event_id: event.id, message_id: randomUUID() })),
      )
      .execute();
    const seen: string[] = [];
    const handlers = batchHandlers((events) => {
      seen.push(...events.map((event) => event.id));
    });
    const [first] = fresh;
    if (first === undefined) throw new Error("no fresh event");
    await sendRaw(bed.sqs, queue.queueUrl, [first, ...old, ...fresh.slice(1), first]);
    const effectsBefore = await effectCount(bed.database);
    const consumer = bed.consumer(queue, {
      handlers,
      name: "batch-duplicates",
      pollers: 1,
      waitTimeSeconds: 1,
    });
    consumer.start();
    await expect
      .poll(() => consumer.stats().processed + consumer.stats().duplicates, { timeout: 15_000 })
      .toBe(9);
    const summary = await consumer.drain();
    expect(summary).toMatchObject({ clean: true, processed: 5, duplicates: 4, failed: 0 });
    expect(seen.sort()).toEqual(fresh.map((event) => event.id).sort());
    expect((await effectCount(bed.database)) - effectsBefore).toBe(5);
    expect(await queueDepth(bed.sqs, queue.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it("finish a batch in flight at the stop under the drain, and commit it once", async () => {
    const queue = await queueFor("batch-stop");
    let batchesStarted = 0;
    const handlers = batchHandlers(async () => {
      batchesStarted += 1;
      await sleep(1_000);
    });
    const events = Array.from({ length: 10 }, (_, index) => exampleEvent(`stop-${index}`));
    await sendRaw(bed.sqs, queue.queueUrl, events);
    const effectsBefore = await effectCount(bed.database);
    const consumer = bed.consumer(queue, {
      handlers,
      name: "batch-stop",
      pollers: 1,
      waitTimeSeconds: 1,
      drainTimeoutMs: 10_000,
    });
    consumer.start();
    await expect.poll(() => batchesStarted, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(consumer.inFlight().messages).toBeGreaterThan(1);
    const summary = await consumer.drain();
    expect(summary).toMatchObject({ clean: true, processed: 10, duplicates: 0, released: 0, failed: 0 });
    expect((await effectCount(bed.database)) - effectsBefore).toBe(10);
    expect(await queueDepth(bed.sqs, queue.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it("check maxBatchSize at definition and type the events by the event map", () => {
    expect(() => defineBatchHandler({ maxBatchSize: 11, handleBatch: async () => {} })).toThrow(
      "maxBatchSize must be an integer from 1 to 10, got 11",
    );
    expect(() => defineBatchHandler({ maxBatchSize: 0, handleBatch: async () => {} })).toThrow(RangeError);
    defineHandlers<{ "example.created": { name: string } }, ExampleDatabase>({
      "example.created": defineBatchHandler({
        async handleBatch(events) {
          // @ts-expect-error the payload has no such field
          events[0]?.payload.missing;
        },
      }),
    });
  });
});
