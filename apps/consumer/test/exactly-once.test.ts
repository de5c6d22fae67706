import { randomUUID } from "node:crypto";
import { migrateApiTables } from "@outbox/api";
import exampleHandlers, { type ExampleDatabase } from "@outbox/example-handlers";
import { drainQueue, queueDepth } from "@outbox/test-kit";
import { describe, expect, it } from "vitest";
import { ConsumerOptionsError, defineHandlers } from "../src/index.js";
import {
  ENVELOPE_TOPIC_ARN,
  effectCount,
  effectRowsOf,
  envelopeBody,
  exampleEvent,
  inboxRowsOf,
  queueFor,
  sendBody,
  sendRaw,
  useConsumerTestBed,
} from "./harness.js";

const bed = useConsumerTestBed("consumer_once");

describe("exactly-once effects", () => {
  it("applies an event delivered twice (re-published with a new MessageId) once and counts one duplicate", async () => {
    const queue = await queueFor("once");
    const event = exampleEvent("twice");
    const other = exampleEvent("once");
    // First delivery raw, the re-publish as an SNS envelope: the dedup key is the event id in both.
    await sendRaw(bed.sqs, queue.queueUrl, [event, other]);
    await sendBody(
      bed.sqs,
      queue.queueUrl,
      envelopeBody({ ...event, headers: { traceparent: "00-abc-def-01" } }),
    );

    const consumer = bed.consumer(queue, {
      handlers: exampleHandlers,
      name: "once",
      // Raw deliveries keep their SQS attributes, which win; the envelope is unwrapped, its topic allowed.
      delivery: "envelope",
      topicArns: [ENVELOPE_TOPIC_ARN],
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
    expect(await effectCount(bed.database)).toBe(2);
    const inbox = await inboxRowsOf(bed.database, "once");
    expect(inbox.map((row) => row.event_id).sort()).toEqual([event.id, other.id].sort());
    expect(await queueDepth(bed.sqs, queue.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it("never takes a message's identity from its body: an envelope claiming a processed event is not a duplicate", async () => {
    const queue = await queueFor("claims");
    const processed = exampleEvent("first");
    // The body claims the processed event's identity; the SQS attributes say it is another event.
    const claim = (topicArn?: string) =>
      envelopeBody(processed, JSON.stringify({ name: "claimed" }), topicArn);
    // Payloads that are envelopes claiming that identity too, with the name the example handler needs.
    const genuine = { ...exampleEvent(), payload: { ...JSON.parse(claim()), name: "genuine" } };
    const genuineInEnvelopeMode = {
      ...exampleEvent(),
      payload: { ...JSON.parse(claim()), name: "genuine-2" },
    };
    await sendRaw(bed.sqs, queue.queueUrl, [processed]);
    const run = async (options: { delivery: "raw" | "envelope"; topicArns?: string[] }, settled: number) => {
      const consumer = bed.consumer(queue, {
        handlers: exampleHandlers,
        dlqUrl: queue.dlqUrl,
        name: "claims",
        waitTimeSeconds: 1,
        concurrency: 1,
        ...options,
      });
      consumer.start();
      await expect
        .poll(() => consumer.stats().processed + consumer.stats().poison + consumer.stats().duplicates, {
          timeout: 20_000,
        })
        .toBe(settled);
      return consumer.drain();
    };
    expect(await run({ delivery: "raw" }, 1)).toMatchObject({ processed: 1, duplicates: 0 });

    // Raw delivery: a body is never unwrapped. With attributes, the event is theirs and runs; without
    // any, it is poison (to the DLQ with its reason), never the processed event's duplicate.
    await sendRaw(bed.sqs, queue.queueUrl, [genuine]);
    await sendBody(bed.sqs, queue.queueUrl, claim());
    expect(await run({ delivery: "raw" }, 2)).toMatchObject({ processed: 1, poison: 1, duplicates: 0 });

    // Envelope delivery: the SQS attributes still win; an envelope of a topic not allowed is poison.
    await sendRaw(bed.sqs, queue.queueUrl, [genuineInEnvelopeMode]);
    await sendBody(bed.sqs, queue.queueUrl, claim("arn:aws:sns:us-east-1:111111111111:elsewhere"));
    expect(await run({ delivery: "envelope", topicArns: [ENVELOPE_TOPIC_ARN] }, 2)).toMatchObject({
      processed: 1,
      poison: 1,
      duplicates: 0,
    });

    expect((await effectRowsOf(bed.database, genuine.id)).length).toBe(1);
    expect((await effectRowsOf(bed.database, genuineInEnvelopeMode.id)).length).toBe(1);
    const dead = await drainQueue(bed.sqs, queue.dlqUrl);
    expect(dead.map((message) => message.attributes.poison_reason?.split(":")[0]).sort()).toEqual([
      "missing_event_id",
      "topic_not_allowed",
    ]);
    expect(dead.map((message) => message.attributes.poison_reason).join("\n")).toMatch(
      /topic_not_allowed: TopicArn is not in CONSUMER_TOPIC_ARNS: arn:aws:sns:us-east-1:111111111111:elsewhere/,
    );
    expect(await queueDepth(bed.sqs, queue.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it("keeps the transaction to itself: a handler cannot commit the inbox row early", async () => {
    const queue = await queueFor("own-trx");
    const event = exampleEvent("nested");
    const handlers = defineHandlers<{ "example.created": { name: string } }, ExampleDatabase>({
      "example.created": async (received, { trx }) => {
        await trx.transaction().execute(async (inner) => {
          await inner
            .insertInto("example_effects")
            .values({ event_id: received.id, event_type: received.type, payload: "{}" })
            .execute();
        });
      },
    });
    await sendRaw(bed.sqs, queue.queueUrl, [event]);
    const consumer = bed.consumer(queue, {
      handlers,
      name: "own-trx",
      waitTimeSeconds: 1,
      retryBaseSeconds: 60,
    });
    consumer.start();
    await expect.poll(() => consumer.stats().failed, { timeout: 10_000 }).toBe(1);
    await consumer.drain();
    const rows = await effectRowsOf(bed.database, event.id);
    expect(rows).toEqual([]);
    const inbox = await inboxRowsOf(bed.database, "own-trx");
    expect(inbox).toEqual([]);
  });

  it("applies photo.posted (the photo service's event) once, as one feed row", async () => {
    // photo_feed comes with the photo service's tables.
    await migrateApiTables(bed.database.db);
    const queue = await queueFor("photos");
    const photoId = randomUUID();
    const posted = { id: randomUUID(), type: "photo.posted", payload: { photoId, title: "Dusk" } };
    await sendRaw(bed.sqs, queue.queueUrl, [posted, posted]);
    const consumer = bed.consumer(queue, {
      handlers: exampleHandlers,
      name: "photos",
      waitTimeSeconds: 1,
      concurrency: 1,
    });
    consumer.start();
    await expect
      .poll(() => consumer.stats().processed + consumer.stats().duplicates, { timeout: 20_000 })
      .toBe(2);
    expect(await consumer.drain()).toMatchObject({ processed: 1, duplicates: 1, poison: 0 });
    const feed = await bed.database.db
      .withTables<Pick<ExampleDatabase, "photo_feed">>()
      .selectFrom("photo_feed")
      .select(["event_id", "photo_id", "title"])
      .execute();
    expect(feed).toEqual([{ event_id: posted.id, photo_id: photoId, title: "Dusk" }]);
  });
});

describe("createConsumer options", () => {
  it("refuses what the daemon would refuse in its CONSUMER_… form, instead of waiting forever", async () => {
    const queue = await queueFor("options");
    const consumer = (options: {
      concurrency?: number;
      retryBaseSeconds?: number;
      retryMaxSeconds?: number;
      delivery?: "raw" | "envelope";
      topicArns?: string[];
    }) => bed.consumer(queue, { handlers: exampleHandlers, ...options });
    // No capacity at all: the pollers would wait for a free slot that never comes.
    expect(() => consumer({ concurrency: 0 })).toThrow(
      new ConsumerOptionsError("concurrency: must be between 1 and 500 (got 0)"),
    );
    expect(() => consumer({ retryBaseSeconds: 60, retryMaxSeconds: 10 })).toThrow(
      "retryBaseSeconds: 60 must not exceed retryMaxSeconds (10)",
    );
    expect(() => consumer({ delivery: "envelope" })).toThrow(
      new ConsumerOptionsError(
        "topicArns: is required with CONSUMER_DELIVERY=envelope: only notifications of these topics are unwrapped",
      ),
    );
    expect(() => consumer({ topicArns: [ENVELOPE_TOPIC_ARN] })).toThrow(
      /only read with CONSUMER_DELIVERY=envelope/,
    );
  });
});
