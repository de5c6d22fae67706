import { performance } from "node:perf_hooks";
import exampleHandlers, { type ExampleDatabase } from "@outbox/example-handlers";
import { sleep } from "@outbox/shared";
import { queueDepth } from "@outbox/test-kit";
import { describe, expect, it } from "vitest";
import { defineHandlers } from "../src/index.js";
import { effectRowsOf, exampleEvent, queueFor, sendRaw, useConsumerTestBed } from "./harness.js";

const bed = useConsumerTestBed("consumer_stop");

describe("stopping", () => {
  it("does not abort a long poll open at the stop; what it returns too late for the drain is released at once", async () => {
    const queue = await queueFor("late-poll");
    const consumer = bed.consumer(queue, {
      handlers: exampleHandlers,
      name: "late-poll",
      pollers: 1,
      waitTimeSeconds: 3,
      // The poll, open at the stop, returns the messages sent 1.5 s into this 4 s drain, leaving
      // < 3.5 s: the send has a second either way before the poll's own end and the margin's edge.
      drainTimeoutMs: 4_000,
      visibilityMarginMs: 3_500,
    });
    consumer.start();
    await sleep(200); // the poll is open and waiting
    const started = performance.now();
    const draining = consumer.drain();
    await sleep(1_500);
    // The stack's SQS answers the open poll as soon as these are there (as AWS does).
    await sendRaw(bed.sqs, queue.queueUrl, [exampleEvent("a"), exampleEvent("b"), exampleEvent("c")]);
    const summary = await draining;
    // It waited for the poll (not aborted), then had < 3.5 s left: released instead of processed.
    expect(performance.now() - started).toBeGreaterThan(1_000);
    expect(summary).toMatchObject({ clean: true, processed: 0, released: 3 });
    // Released means visible again at once (not after the 30 s visibility timeout); polled briefly
    // because the queue server answers on its own tick.
    await expect
      .poll(() => queueDepth(bed.sqs, queue.queueUrl), { timeout: 15_000 })
      .toEqual({ visible: 3, inFlight: 0 });
  });

  it("when the drain deadline passes, rolls back what is still running and releases it", async () => {
    const queue = await queueFor("drain-expired");
    const handlers = defineHandlers<{ "example.created": { name: string } }, ExampleDatabase>({
      "example.created": async (event, { trx }) => {
        await trx
          .insertInto("example_effects")
          .values({ event_id: event.id, event_type: event.type, payload: "{}" })
          .execute();
        await sleep(3_000);
      },
    });
    const consumer = bed.consumer(queue, {
      handlers,
      name: "drain-expired",
      waitTimeSeconds: 0,
      drainTimeoutMs: 500,
    });
    const event = exampleEvent("slow");
    await sendRaw(bed.sqs, queue.queueUrl, [event]);
    consumer.start();
    await expect.poll(() => consumer.inFlight().messages, { timeout: 5_000 }).toBe(1);
    const started = performance.now();
    const summary = await consumer.drain();
    // Not the handler's 3 s: the drain gave up at its deadline (a loaded machine adds to the 500 ms).
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(summary).toMatchObject({ clean: false, processed: 0, released: 1, failed: 0 });
    const rows = await effectRowsOf(bed.database, event.id);
    expect(rows).toEqual([]);
    // Released at once: the queue server applies a visibility of 0 on its next timer tick, so poll
    // briefly, well inside the 30 s visibility timeout a message left unreleased would wait out.
    await expect
      .poll(() => queueDepth(bed.sqs, queue.queueUrl), { timeout: 15_000 })
      .toEqual({ visible: 1, inFlight: 0 });
  });
});
