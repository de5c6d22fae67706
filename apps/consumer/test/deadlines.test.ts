import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { deadlineFetch } from "@outbox/client";
import type { ExampleDatabase } from "@outbox/example-handlers";
import { sleep } from "@outbox/shared";
import { capturingLogger, metricValue, queueDepth } from "@outbox/test-kit";
import { sql } from "kysely";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { type Consumer, defineHandlers } from "../src/index.js";
import { effectRowsOf, inboxRowsOf, queueFor, sendRaw, useConsumerTestBed } from "./harness.js";

const bed = useConsumerTestBed("consumer_deadlines");

async function effectRows(eventId: string): Promise<number> {
  return (await effectRowsOf(bed.database, eventId)).length;
}

describe("deadlines and leases", () => {
  it("extends the lease of a handler slower than the visibility timeout; a second consumer never gets it", async () => {
    const queue = await queueFor("slow", { maxReceiveCount: 20 });
    const event = { id: randomUUID(), type: "slow.work", payload: {} };
    let calls = 0;
    const handlers = defineHandlers<{ "slow.work": object }, ExampleDatabase>({
      "slow.work": async (received, { trx }) => {
        calls += 1;
        await sleep(4_500);
        await trx
          .insertInto("example_effects")
          .values({ event_id: received.id, event_type: received.type, payload: "{}" })
          .execute();
      },
    });
    const registries = [new Registry(), new Registry()];
    const consumers: Consumer[] = registries.map((metrics) =>
      bed.consumer(queue, {
        handlers,
        name: "slow",
        metrics,
        waitTimeSeconds: 1,
        visibilityTimeoutSeconds: 2,
        visibilityMarginMs: 500,
        handlerTimeoutMs: 10_000,
      }),
    );
    await sendRaw(bed.sqs, queue.queueUrl, [event]);
    for (const consumer of consumers) consumer.start();
    await expect.poll(() => effectRows(event.id), { timeout: 15_000 }).toBe(1);
    const [first, second] = await Promise.all(consumers.map((consumer) => consumer.drain()));
    expect(calls).toBe(1);
    expect((first?.processed ?? 0) + (second?.processed ?? 0)).toBe(1);
    expect((first?.duplicates ?? 0) + (second?.duplicates ?? 0)).toBe(0);
    let extensions = 0;
    for (const registry of registries)
      extensions += await metricValue(registry, "consumer_visibility_extensions_total");
    // A 2 s lease and a 4.5 s handler: renewed at half-life, about every second.
    expect(extensions).toBeGreaterThanOrEqual(3);
    expect(await queueDepth(bed.sqs, queue.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it("aborts a handler past its deadline and rolls its transaction back: no partial effect", async () => {
    const queue = await queueFor("deadline");
    const stuck = { id: randomUUID(), type: "stuck.handler", payload: {} };
    const slowQuery = { id: randomUUID(), type: "slow.query", payload: {} };
    const headers: string[] = [];
    const server: Server = createServer((req, res) => {
      headers.push(String(req.headers["x-request-timeout-ms"]));
      res.end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    let queryFailedAfterMs = 0;
    let stuckStartedAt = 0;
    let stuckWoke: () => void = () => {};
    const stuckAwake = new Promise<void>((resolve) => {
      stuckWoke = resolve;
    });
    const { lines, log } = capturingLogger();
    const handlers = defineHandlers<{ "stuck.handler": object; "slow.query": object }, ExampleDatabase>({
      "stuck.handler": async (event, { trx, deadline }) => {
        stuckStartedAt = Date.now();
        await deadlineFetch(deadline, url);
        await trx
          .insertInto("example_effects")
          .values({ event_id: event.id, event_type: event.type, payload: "{}" })
          .execute();
        // Ignores its deadline: the consumer must not wait for it to decide.
        await sleep(3_000);
        stuckWoke();
      },
      "slow.query": async (_event, { trx }) => {
        const started = performance.now();
        try {
          await sql`SELECT pg_sleep(10)`.execute(trx);
        } finally {
          queryFailedAfterMs = performance.now() - started;
        }
      },
    });
    const consumer = bed.consumer(queue, {
      handlers,
      log,
      name: "deadline",
      waitTimeSeconds: 1,
      handlerTimeoutMs: 1_000,
      visibilityMarginMs: 500,
      // Keep the failed messages out of the way for the rest of the test.
      retryBaseSeconds: 60,
    });
    await sendRaw(bed.sqs, queue.queueUrl, [stuck, slowQuery]);
    consumer.start();
    await expect.poll(() => consumer.stats().failed, { timeout: 10_000 }).toBe(2);
    // Both gave up at the 1 s deadline, not after the 3 s sleep or the 10 s query: by the
    // consumer's own clock, its failure line against the handler's start, and the query's own end.
    const failedAt = lines
      .filter((line) => line.msg === "message failed; retrying later")
      .map((line) => Date.parse(String(line.time)));
    expect(failedAt).toHaveLength(2);
    expect(Math.max(...failedAt) - stuckStartedAt).toBeLessThan(3_000);
    expect(queryFailedAfterMs).toBeGreaterThan(500);
    expect(queryFailedAfterMs).toBeLessThan(10_000);
    const budget = Number(headers[0]);
    expect(budget).toBeGreaterThan(500);
    expect(budget).toBeLessThanOrEqual(1_000);
    await stuckAwake; // the stuck handler wakes up; its transaction is long gone

    const summary = await consumer.drain();
    expect(summary).toMatchObject({ processed: 0, failed: 2 });
    expect(await effectRows(stuck.id)).toBe(0);
    const inbox = await inboxRowsOf(bed.database, "deadline");
    expect(inbox).toEqual([]);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
