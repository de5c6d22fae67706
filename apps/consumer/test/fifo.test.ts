import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { sleep } from "@outbox/shared";
import { drainQueue, metricValue, queueDepth } from "@outbox/test-kit";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { defineHandlers, PoisonMessageError } from "../src/index.js";
import { queueFor, sendBody, sendRaw, type TestEvent, useConsumerTestBed } from "./harness.js";

const bed = useConsumerTestBed("consumer_fifo");

interface Step {
  group: string;
  seq: number;
}

interface Run extends Step {
  started: number;
  ended: number;
  ok: boolean;
}

/** `perGroup` steps of each group, randomly interleaved: the order within a group is the send order. */
function interleaved(groups: readonly string[], perGroup: number): TestEvent[] {
  const next = new Map(groups.map((group) => [group, 0]));
  const events: TestEvent[] = [];
  while (events.length < groups.length * perGroup) {
    const open = groups.filter((group) => (next.get(group) ?? perGroup) < perGroup);
    const group = open[Math.floor(Math.random() * open.length)] ?? "";
    const seq = next.get(group) ?? 0;
    next.set(group, seq + 1);
    events.push({ id: randomUUID(), type: "fifo.step", payload: { group, seq }, group });
  }
  return events;
}

/** `count` steps of one group, in order. */
function steps(group: string, count: number): TestEvent[] {
  return Array.from({ length: count }, (_, seq) => ({
    id: randomUUID(),
    type: "fifo.step",
    payload: { group, seq },
    group,
  }));
}

/** Handlers recording every run of a step into `runs`; each step takes `pauseMs()`. */
function recording(runs: Run[], pauseMs: () => number) {
  return defineHandlers<{ "fifo.step": Step }>({
    "fifo.step": async (event) => {
      const started = performance.now();
      await sleep(pauseMs());
      runs.push({ ...event.payload, started, ended: performance.now(), ok: true });
    },
  });
}

function runsOf(runs: readonly Run[], group: string): Run[] {
  return runs.filter((run) => run.group === group).sort((a, b) => a.started - b.started);
}

// local-aws-sqs, unlike SQS, hands out more messages of a group while one of it is in flight: two
// receives open at once could each take part of a group and come back in either order. One poller
// keeps receives sequential, as SQS's group lock would; the consumer keeps the order from there.
const FIFO_OPTIONS = { pollers: 1, waitTimeSeconds: 1 } as const;

describe("FIFO queues", () => {
  it("handles each group's messages one after another in send order, groups in parallel", async () => {
    const queue = await queueFor("fifo-order", { fifo: true });
    const groups = ["g-a", "g-b", "g-c"];
    const perGroup = 20;
    const runs: Run[] = [];
    const handlers = recording(runs, () => 2 + Math.random() * 15);
    await sendRaw(bed.sqs, queue.queueUrl, interleaved(groups, perGroup));
    const consumer = bed.consumer(queue, { handlers, name: "fifo-order", concurrency: 10, ...FIFO_OPTIONS });
    consumer.start();
    await expect.poll(() => consumer.stats().processed, { timeout: 30_000 }).toBe(groups.length * perGroup);
    const summary = await consumer.drain();
    expect(summary).toMatchObject({ clean: true, processed: 60, failed: 0, released: 0, duplicates: 0 });

    for (const group of groups) {
      const ordered = runsOf(runs, group);
      expect(
        ordered.map((run) => run.seq),
        group,
      ).toEqual(Array.from({ length: perGroup }, (_, seq) => seq));
      // One after another: each starts only once the one before it has ended.
      for (let index = 1; index < ordered.length; index += 1) {
        expect(ordered[index]?.started ?? 0).toBeGreaterThanOrEqual(ordered[index - 1]?.ended ?? 0);
      }
    }
    // Across groups they do overlap: the parallelism is real.
    let overlapping = 0;
    for (const a of runs) {
      for (const b of runs) {
        if (a.group < b.group && a.started < b.ended && b.started < a.ended) overlapping += 1;
      }
    }
    expect(overlapping).toBeGreaterThan(5);
    expect(await queueDepth(bed.sqs, queue.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it("a failing message holds only its group: the rest of it waits for the retry, other groups go on", async () => {
    const queue = await queueFor("fifo-hold", { fifo: true });
    const runs: Run[] = [];
    let failedOnce = false;
    const handlers = defineHandlers<{ "fifo.step": Step }>({
      "fifo.step": async (event) => {
        const started = performance.now();
        const { group, seq } = event.payload;
        await sleep(5);
        const fail = group === "a" && seq === 0 && !failedOnce;
        if (fail) failedOnce = true;
        runs.push({ group, seq, started, ended: performance.now(), ok: !fail });
        if (fail) throw new Error("downstream said no, once");
      },
    });
    await sendRaw(bed.sqs, queue.queueUrl, interleaved(["a", "b"], 4));
    const consumer = bed.consumer(queue, {
      handlers,
      name: "fifo-hold",
      concurrency: 10,
      retryBaseSeconds: 1,
      ...FIFO_OPTIONS,
    });
    consumer.start();
    await expect.poll(() => consumer.stats().processed, { timeout: 30_000 }).toBe(8);
    const summary = await consumer.drain();
    expect(summary).toMatchObject({ clean: true, processed: 8, failed: 1, duplicates: 0, poison: 0 });

    const a = runsOf(runs, "a");
    // The failed first message, its retry, then the rest of the group: none of it ran ahead.
    expect(a.map((run) => [run.seq, run.ok])).toEqual([
      [0, false],
      [0, true],
      [1, true],
      [2, true],
      [3, true],
    ]);
    // The retry came after the 1 s delay; group b did not wait for it.
    const retry = a[1]?.started ?? 0;
    expect(retry - (a[0]?.ended ?? 0)).toBeGreaterThanOrEqual(900);
    const b = runsOf(runs, "b");
    expect(b.map((run) => run.seq)).toEqual([0, 1, 2, 3]);
    expect(Math.max(...b.map((run) => run.ended))).toBeLessThan(retry);
    expect(await queueDepth(bed.sqs, queue.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it("keeps the leases of messages waiting behind their group alive: none comes back while held", async () => {
    const queue = await queueFor("fifo-wait", { fifo: true, maxReceiveCount: 20 });
    const registry = new Registry();
    const runs: Run[] = [];
    const handlers = recording(runs, () => 1_200);
    // The last one waits 2.4 s behind the others: longer than its 2 s lease from the receive.
    await sendRaw(bed.sqs, queue.queueUrl, steps("slow", 3));
    const consumer = bed.consumer(queue, {
      handlers,
      name: "fifo-wait",
      metrics: registry,
      visibilityTimeoutSeconds: 2,
      visibilityMarginMs: 500,
      handlerTimeoutMs: 10_000,
      ...FIFO_OPTIONS,
    });
    consumer.start();
    await expect.poll(() => consumer.stats().processed, { timeout: 20_000 }).toBe(3);
    // Long enough for a lease that ran out to bring a message back.
    await sleep(1_500);
    const summary = await consumer.drain();
    expect(summary).toMatchObject({
      clean: true,
      processed: 3,
      duplicates: 0,
      released: 0,
      deleteFailures: 0,
    });
    expect(runs.map((run) => run.seq)).toEqual([0, 1, 2]);
    expect(await metricValue(registry, "consumer_visibility_extensions_total")).toBeGreaterThan(0);
    expect(await queueDepth(bed.sqs, queue.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it("in a drain, releases the messages whose turn comes too late instead of starting them", async () => {
    const queue = await queueFor("fifo-drain", { fifo: true });
    const runs: Run[] = [];
    const handlers = recording(runs, () => 1_200);
    await sendRaw(bed.sqs, queue.queueUrl, steps("late", 3));
    const consumer = bed.consumer(queue, {
      handlers,
      name: "fifo-drain",
      // The first ends ~1.2 s into a 2 s drain: what is left then is within the 1.5 s margin.
      drainTimeoutMs: 2_000,
      visibilityMarginMs: 1_500,
      ...FIFO_OPTIONS,
    });
    consumer.start();
    await expect.poll(() => consumer.inFlight().messages, { timeout: 5_000 }).toBe(3);
    const summary = await consumer.drain();
    expect(summary).toMatchObject({ clean: true, processed: 1, released: 2, failed: 0 });
    expect(runs.map((run) => run.seq)).toEqual([0]);
    // Released means visible again at once.
    await expect
      .poll(() => queueDepth(bed.sqs, queue.queueUrl), { timeout: 15_000 })
      .toEqual({ visible: 2, inFlight: 0 });
  });

  it("sends poison to the FIFO DLQ with its group id and a dedup id; the group goes on after it", async () => {
    const queue = await queueFor("fifo-poison", { fifo: true });
    const handled: string[] = [];
    const handlers = defineHandlers<{ "example.created": { name: string }; "handler.rejects": object }>({
      "example.created": async (event) => {
        handled.push(event.payload.name);
      },
      "handler.rejects": async () => {
        throw new PoisonMessageError("order 42 does not exist and never will");
      },
    });
    const string = (value: string) => ({ DataType: "String", StringValue: value });
    const malformedId = await sendBody(
      bed.sqs,
      queue.queueUrl,
      "{not json",
      { event_id: string(randomUUID()), event_type: string("example.created") },
      { group: "p", deduplicationId: randomUUID() },
    );
    const [rejectedId] = await sendRaw(bed.sqs, queue.queueUrl, [
      { id: randomUUID(), type: "handler.rejects", payload: {}, group: "q" },
      { id: randomUUID(), type: "example.created", payload: { name: "after-p" }, group: "p" },
      { id: randomUUID(), type: "example.created", payload: { name: "after-q" }, group: "q" },
    ]);
    const consumer = bed.consumer(queue, {
      handlers,
      dlqUrl: queue.dlqUrl,
      name: "fifo-poison",
      ...FIFO_OPTIONS,
    });
    consumer.start();
    await expect
      .poll(() => consumer.stats().poison + consumer.stats().processed, { timeout: 15_000 })
      .toBe(4);
    const summary = await consumer.drain();
    expect(summary).toMatchObject({ clean: true, processed: 2, poison: 2, failed: 0 });
    expect(handled.sort()).toEqual(["after-p", "after-q"]);

    const dead = await drainQueue(bed.sqs, queue.dlqUrl);
    const byGroup = Object.fromEntries(dead.map((message) => [message.groupId, message]));
    expect(Object.keys(byGroup).sort()).toEqual(["p", "q"]);
    expect(byGroup.p).toMatchObject({ body: "{not json", deduplicationId: malformedId });
    expect(byGroup.p?.attributes.poison_reason).toMatch(/^body_not_json: /);
    expect(byGroup.q).toMatchObject({ deduplicationId: rejectedId });
    expect(byGroup.q?.attributes.poison_reason).toMatch(/^rejected_by_handler: order 42/);
    expect(await queueDepth(bed.sqs, queue.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });
});
