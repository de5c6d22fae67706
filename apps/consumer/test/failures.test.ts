import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import exampleHandlers, { type ExampleDatabase } from "@outbox/example-handlers";
import { capturingLogger, drainQueue, queueDepth } from "@outbox/test-kit";
import { describe, expect, it } from "vitest";
import { defineHandlers, PoisonMessageError } from "../src/index.js";
import { retryDelaySeconds } from "../src/message/fate.js";
import {
  ENVELOPE_TOPIC_ARN,
  effectCount,
  envelopeBody,
  exampleEvent,
  queueFor,
  sendBody,
  sendRaw,
  useConsumerTestBed,
} from "./harness.js";

const bed = useConsumerTestBed("consumer_failures");

describe("failing handlers", () => {
  it("doubles the retry delay with each receive, capped", () => {
    expect([1, 2, 3, 4, 5].map((count) => retryDelaySeconds(count, 2, 10))).toEqual([2, 4, 8, 10, 10]);
    expect(retryDelaySeconds(3, 0, 300)).toBe(0);
  });

  it("rolls back, retries with backoff, ends in the DLQ after maxReceiveCount, and the rest flows meanwhile", async () => {
    const queue = await queueFor("failing", { maxReceiveCount: 3 });
    const attempts: number[] = [];
    const failing = { id: randomUUID(), type: "always.fails", payload: {} };
    const handlers = defineHandlers<
      { "always.fails": object; "example.created": { name: string } },
      ExampleDatabase
    >({
      "always.fails": async (_event, { trx }) => {
        attempts.push(performance.now());
        // Written, then rolled back with the inbox row by the throw.
        await trx
          .insertInto("example_effects")
          .values({ event_id: failing.id, event_type: "x", payload: "{}" })
          .execute();
        throw new Error("downstream said no");
      },
      "example.created": (event, context) => {
        const entry = exampleHandlers.find("example.created");
        if (entry === undefined || typeof entry === "function" || !("handle" in entry))
          throw new Error("example handler changed shape");
        return entry.handle(event, context);
      },
    });
    const good = Array.from({ length: 20 }, (_, index) => exampleEvent(`good-${index}`));
    await sendRaw(bed.sqs, queue.queueUrl, [failing, ...good]);
    const consumer = bed.consumer(queue, {
      handlers,
      name: "failing",
      waitTimeSeconds: 1,
      concurrency: 5,
      retryBaseSeconds: 1,
    });
    consumer.start();
    // The good events do not wait for the failing one's retries.
    await expect.poll(() => consumer.stats().processed, { timeout: 10_000 }).toBe(20);
    expect(attempts.length).toBeLessThanOrEqual(2);

    await expect
      .poll(async () => (await drainQueue(bed.sqs, queue.dlqUrl)).length, { timeout: 30_000, interval: 500 })
      .toBe(1);
    const summary = await consumer.drain();
    expect(summary).toMatchObject({ clean: true, processed: 20, duplicates: 0, poison: 0 });
    expect(summary.failed).toBe(attempts.length);
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    // The delay after the first failure was at least the 1 s base.
    expect((attempts[1] ?? 0) - (attempts[0] ?? 0)).toBeGreaterThanOrEqual(950);
    expect(await effectCount(bed.database)).toBe(20);
    const inbox = await bed.database.db
      .selectFrom("inbox")
      .select("event_id")
      .where("event_id", "=", failing.id)
      .execute();
    expect(inbox).toEqual([]);
    expect(await queueDepth(bed.sqs, queue.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });
});

describe("poison messages", () => {
  const validId = () => ({ DataType: "String", StringValue: randomUUID() });
  const type = (value: string) => ({ DataType: "String", StringValue: value });

  it("moves each kind of undecodable message to the DLQ with its reason and keeps consuming", async () => {
    const queue = await queueFor("poison");
    const handlers = defineHandlers<
      { "example.created": { name: string }; "handler.rejects": object },
      ExampleDatabase
    >({
      "example.created": {
        parse: (payload) => {
          const name = (payload as { name?: unknown }).name;
          if (typeof name !== "string") throw new TypeError("name must be a string");
          return { name };
        },
        handle: async (event, { trx }) => {
          await trx
            .insertInto("example_effects")
            .values({ event_id: event.id, event_type: event.type, payload: JSON.stringify(event.payload) })
            .execute();
        },
      },
      "handler.rejects": async () => {
        throw new PoisonMessageError("order 42 does not exist and never will");
      },
    });
    const corpus: {
      kind: string;
      body: string;
      attributes?: Record<string, { DataType: string; StringValue: string }>;
    }[] = [
      {
        kind: "body_not_json",
        body: "{not json",
        attributes: { event_id: validId(), event_type: type("example.created") },
      },
      { kind: "missing_event_id", body: '{"name":"x"}', attributes: { event_type: type("example.created") } },
      { kind: "missing_event_type", body: '{"name":"x"}', attributes: { event_id: validId() } },
      {
        kind: "wrong_attribute_type",
        body: '{"name":"x"}',
        attributes: {
          event_id: { DataType: "Number", StringValue: "42" },
          event_type: type("example.created"),
        },
      },
      {
        kind: "invalid_event_id",
        body: '{"name":"x"}',
        attributes: { event_id: type("order-42"), event_type: type("example.created") },
      },
      // Raw delivery: an envelope without SQS attributes is not unwrapped, and has no event id.
      { kind: "missing_event_id", body: envelopeBody(exampleEvent(), "{broken") },
      {
        kind: "unknown_event_type",
        body: "{}",
        attributes: { event_id: validId(), event_type: type("nobody.handles") },
      },
      {
        kind: "payload_rejected",
        body: '{"name":42}',
        attributes: { event_id: validId(), event_type: type("example.created") },
      },
      {
        kind: "rejected_by_handler",
        body: "{}",
        attributes: { event_id: validId(), event_type: type("handler.rejects") },
      },
      { kind: "missing_event_id", body: '"just a string"' },
    ];
    for (const entry of corpus) await sendBody(bed.sqs, queue.queueUrl, entry.body, entry.attributes);
    const good = Array.from({ length: 5 }, (_, index) => exampleEvent(`good-${index}`));
    await sendRaw(bed.sqs, queue.queueUrl, good);

    const consumer = bed.consumer(queue, {
      handlers,
      dlqUrl: queue.dlqUrl,
      name: "poison",
      waitTimeSeconds: 1,
    });
    consumer.start();
    await expect
      .poll(() => consumer.stats().poison + consumer.stats().processed, { timeout: 15_000 })
      .toBe(corpus.length + good.length);
    const summary = await consumer.drain();
    expect(summary).toMatchObject({
      clean: true,
      processed: 5,
      poison: corpus.length,
      failed: 0,
      duplicates: 0,
    });

    const dead = await drainQueue(bed.sqs, queue.dlqUrl);
    expect(dead.map((message) => message.attributes.poison_reason?.split(":")[0]).sort()).toEqual(
      corpus.map((entry) => entry.kind).sort(),
    );
    // The evidence is kept: the original body travels to the DLQ.
    expect(dead.map((message) => message.body)).toContain("{not json");
    expect(
      dead.find((message) => message.attributes.poison_reason?.startsWith("rejected_by_handler"))?.attributes
        .poison_reason,
    ).toContain("order 42");
    expect(await queueDepth(bed.sqs, queue.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it("with envelope delivery unwraps only well-formed notifications of an allowed topic", async () => {
    const queue = await queueFor("poison-envelope");
    const good = exampleEvent("wrapped");
    const notification = (changes: Record<string, unknown>) =>
      JSON.stringify({ ...JSON.parse(envelopeBody(exampleEvent())), ...changes });
    const corpus = [
      { kind: "envelope_message_not_json", body: envelopeBody(exampleEvent(), "{broken") },
      {
        kind: "topic_not_allowed",
        body: envelopeBody(exampleEvent(), undefined, "arn:aws:sns:us-east-1:111111111111:x"),
      },
      { kind: "not_an_envelope", body: notification({ Type: "SubscriptionConfirmation" }) },
      { kind: "not_an_envelope", body: notification({ MessageId: 7 }) },
      { kind: "not_an_envelope", body: '{"name":"x"}' },
    ];
    for (const entry of corpus) await sendBody(bed.sqs, queue.queueUrl, entry.body);
    await sendBody(bed.sqs, queue.queueUrl, envelopeBody(good));
    const consumer = bed.consumer(queue, {
      handlers: exampleHandlers,
      dlqUrl: queue.dlqUrl,
      delivery: "envelope",
      topicArns: [ENVELOPE_TOPIC_ARN],
      name: "poison-envelope",
      waitTimeSeconds: 1,
    });
    consumer.start();
    await expect
      .poll(() => consumer.stats().poison + consumer.stats().processed, { timeout: 15_000 })
      .toBe(corpus.length + 1);
    expect(await consumer.drain()).toMatchObject({ processed: 1, poison: corpus.length, duplicates: 0 });
    const dead = await drainQueue(bed.sqs, queue.dlqUrl);
    expect(dead.map((message) => message.attributes.poison_reason?.split(":")[0]).sort()).toEqual(
      corpus.map((entry) => entry.kind).sort(),
    );
  });

  it("caps what a poison message's own content puts in its log line and its DLQ reason", async () => {
    const queue = await queueFor("poison-huge");
    const huge = "t".repeat(200 * 1024);
    await sendBody(bed.sqs, queue.queueUrl, "{}", { event_id: validId(), event_type: type(huge) });
    await sendBody(bed.sqs, queue.queueUrl, "{}", {
      event_id: type(huge),
      event_type: type("example.created"),
    });
    const { written: lines, log } = capturingLogger();
    const consumer = bed.consumer(queue, {
      handlers: exampleHandlers,
      dlqUrl: queue.dlqUrl,
      name: "poison-huge",
      waitTimeSeconds: 1,
      log,
    });
    consumer.start();
    await expect.poll(() => consumer.stats().poison, { timeout: 15_000 }).toBe(2);
    await consumer.drain();

    const poisonLines = lines.filter((line) => line.includes('"msg":"poison message"'));
    expect(poisonLines).toHaveLength(2);
    for (const line of lines) expect(line.length).toBeLessThan(2_000);
    const reasons = poisonLines.map((line) => String(JSON.parse(line).reason)).sort();
    expect(reasons[0]).toMatch(/^invalid_event_id: not a UUID: "t{900,}… \(\d+ chars\)$/);
    expect(reasons[1]).toMatch(/^unknown_event_type: no handler for the event type "t{900,}… \(\d+ chars\)$/);
    const dead = await drainQueue(bed.sqs, queue.dlqUrl);
    expect(dead.map((message) => message.attributes.poison_reason).sort()).toEqual(reasons);
  });

  it("caps the event type a handler's log lines carry", async () => {
    const queue = await queueFor("huge-type-logged");
    const huge = "h".repeat(200 * 1024);
    await sendBody(bed.sqs, queue.queueUrl, "{}", { event_id: validId(), event_type: type(huge) });
    const { written: lines, log } = capturingLogger();
    const handlers = defineHandlers<Record<string, never>, ExampleDatabase>(
      {},
      { fallback: async (_event, context) => context.log.info("handled") },
    );
    const consumer = bed.consumer(queue, { handlers, name: "huge-type-logged", waitTimeSeconds: 1, log });
    consumer.start();
    await expect.poll(() => consumer.stats().processed, { timeout: 15_000 }).toBe(1);
    await consumer.drain();
    const handled = lines.find((line) => line.includes('"msg":"handled"'));
    expect(JSON.parse(handled ?? "{}").eventType).toMatch(/^h{900,}… \(204800 chars\)$/);
    for (const line of lines) expect(line.length).toBeLessThan(2_000);
  });

  it("without a DLQ URL leaves poison to the queue's redrive policy", async () => {
    const queue = await queueFor("poison-redrive", { maxReceiveCount: 2 });
    await sendBody(bed.sqs, queue.queueUrl, "{not json", {
      event_id: validId(),
      event_type: type("example.created"),
    });
    const consumer = bed.consumer(queue, {
      handlers: exampleHandlers,
      name: "poison-redrive",
      waitTimeSeconds: 1,
      retryBaseSeconds: 0,
    });
    consumer.start();
    await expect
      .poll(() => drainQueue(bed.sqs, queue.dlqUrl), { timeout: 20_000, interval: 500 })
      .toHaveLength(1);
    const summary = await consumer.drain();
    expect(summary.poison).toBe(0);
    expect(summary.failed).toBeGreaterThanOrEqual(1);
  });
});
