import type { ExampleDatabase } from "@outbox/example-handlers";
import { Transaction } from "kysely";
import { describe, expect, it } from "vitest";
import { defineBatchHandler, defineHandlers } from "../src/index.js";
import { effectRowsOf, exampleEvent, inboxRowsOf, queueFor, sendRaw, useConsumerTestBed } from "./harness.js";

const bed = useConsumerTestBed("consumer_handler_trx");

/** An application's own code, typed for a transaction: the handler passes it `context.trx`. */
async function applyEffect(
  trx: Transaction<ExampleDatabase>,
  eventId: string,
  eventType: string,
): Promise<boolean> {
  await trx
    .insertInto("example_effects")
    .values({ event_id: eventId, event_type: eventType, payload: "{}" })
    .execute();
  return trx instanceof Transaction && trx.isTransaction;
}

describe("the handler's context.trx", () => {
  it("is a kysely Transaction, for a handler and a batch handler alike, and the effect commits with the inbox row", async () => {
    const queue = await queueFor("trx");
    const single = exampleEvent("single");
    const batched = { ...exampleEvent("batched"), type: "example.batched" };
    const seen: boolean[] = [];
    const handlers = defineHandlers<
      { "example.created": { name: string }; "example.batched": { name: string } },
      ExampleDatabase
    >({
      "example.created": async (event, { trx }) => {
        seen.push(await applyEffect(trx, event.id, event.type));
      },
      "example.batched": defineBatchHandler({
        handleBatch: async (events, { trx }) => {
          for (const event of events) seen.push(await applyEffect(trx, event.id, event.type));
        },
      }),
    });
    await sendRaw(bed.sqs, queue.queueUrl, [single, batched]);
    const consumer = bed.consumer(queue, { handlers, name: "trx", waitTimeSeconds: 1 });
    consumer.start();
    await expect.poll(() => consumer.stats().processed, { timeout: 20_000 }).toBe(2);
    expect(await consumer.drain()).toMatchObject({ clean: true, processed: 2, failed: 0, poison: 0 });

    expect(seen).toEqual([true, true]);
    expect((await effectRowsOf(bed.database, single.id)).length).toBe(1);
    expect((await effectRowsOf(bed.database, batched.id)).length).toBe(1);
    const inbox = await inboxRowsOf(bed.database, "trx");
    expect(inbox.map((row) => row.event_id).sort()).toEqual([single.id, batched.id].sort());
  });
});
