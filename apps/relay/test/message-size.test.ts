import { SetTopicAttributesCommand } from "@aws-sdk/client-sns";
import { enqueue, type NewEvent } from "@outbox/client";
import { measureMessage } from "@outbox/client/internal";
import { type BootstrappedResources, bootstrapResources } from "@outbox/devstack";
import { capturingLogger, receiveAll, stack, uniqueName } from "@outbox/test-kit";
import { beforeAll, describe, expect, it } from "vitest";
import { createSnsPublisher, type Publisher } from "../src/index.js";
import { clearOutbox, countRows, useRelayTestBed } from "./harness.js";

const KiB = 1024;
const MiB = 1024 * KiB;
const bed = useRelayTestBed("size", { defaults: { pollIntervalMs: 100 } });
/** A topic raised to 1 MiB, with a raw-delivery queue. */
let large: BootstrappedResources;
beforeAll(async () => {
  large = await bootstrapResources(stack().aws, {
    name: uniqueName("relay-size-large"),
    rawDelivery: true,
    maximumMessageSize: MiB,
  });
});

/** An event whose payload's JSON text is `bytes` long (its message a little more, attributes added). */
function eventOf(topic: string, bytes: number, n = 0): NewEvent {
  return {
    topic,
    eventType: "blob.stored",
    payloadJson: JSON.stringify({ n, blob: "é".repeat((bytes - 20) / 2) }),
  };
}

/** Every PublishBatch the relay sends, by the sizes of its entries, through the real SDK. */
function recordingPublisher(): { publisher: Publisher; requests: number[][] } {
  const real = createSnsPublisher(bed.sns);
  const requests: number[][] = [];
  const publisher: Publisher = {
    messageLimit: real.messageLimit,
    publishBatch(request, deadline) {
      requests.push(request.entries.map((e) => measureMessage(e.message, e.attributes, MiB).bytes));
      return real.publishBatch(request, deadline);
    },
  };
  return { publisher, requests };
}

/** The limits the relay logged it read for `topicArn`, in order. */
const limitsRead = (lines: readonly Record<string, unknown>[], topicArn: string) =>
  lines
    .filter((line) => line.msg === "topic message size limit read" && line.topicArn === topicArn)
    .map((line) => line.maxMessageBytes);

const setLimit = (topicArn: string, bytes: number) =>
  bed.sns.send(
    new SetTopicAttributesCommand({
      TopicArn: topicArn,
      AttributeName: "MaximumMessageSize",
      AttributeValue: String(bytes),
    }),
  );

async function deadReason(id: string): Promise<{ dead: boolean; error: string | null; attempts: number }> {
  const row = await bed.handle.db
    .selectFrom("outbox")
    .select(["dead_at", "last_error", "attempts"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  return { dead: row.dead_at !== null, error: row.last_error, attempts: row.attempts };
}

describe("message size per topic", () => {
  it("publishes a 900 KiB event through a topic whose MaximumMessageSize is 1 MiB, intact", async () => {
    await clearOutbox(bed.handle);
    const relay = bed.start({ topicArns: { media: large.topicArn } });
    const event = eventOf("media", 900 * KiB);
    const [id] = await enqueue(bed.handle.db, [event], { maxMessageBytes: { media: MiB } });
    const [received] = await receiveAll(bed.sqs, large.queueUrl, 1);
    expect(received?.body).toBe(event.payloadJson);
    expect(received?.attributes.event_id).toBe(id);
    await expect.poll(() => countRows(bed.handle)).toEqual({ unsent: 0, published: 1, dead: 0 });
    await bed.stop(relay);
  });

  it("marks the same event dead on a default topic, the reason naming the topic's limit", async () => {
    await clearOutbox(bed.handle);
    const relay = bed.start();
    const dead: string[] = [];
    relay.on("dead", (event) => dead.push(event.reason));
    // The application claimed a limit the topic does not have: enqueue takes it, the relay must not.
    const [id = ""] = await enqueue(bed.handle.db, [eventOf("orders", 900 * KiB)], {
      maxMessageBytes: MiB,
    });
    await expect.poll(() => dead.length, { timeout: 10_000 }).toBe(1);
    expect(await deadReason(id)).toEqual({
      dead: true,
      attempts: 1,
      error: expect.stringMatching(
        new RegExp(`over the 262144-byte SNS limit \\(MaximumMessageSize of ${bed.standard.topicArn}\\)`),
      ),
    });
    expect(await receiveAll(bed.sqs, bed.standard.queueUrl, 0, { quietMs: 300 })).toEqual([]);
    await bed.stop(relay);
  });

  it("splits large entries into requests whose total stays within the topic's 1 MiB", async () => {
    await clearOutbox(bed.handle);
    const { publisher, requests } = recordingPublisher();
    const events = Array.from({ length: 10 }, (_, n) => eventOf("media", 300 * KiB, n));
    await enqueue(bed.handle.db, events, { maxMessageBytes: { media: MiB } });
    const relay = bed.start({ publisher, topicArns: { media: large.topicArn } });
    const received = await receiveAll(bed.sqs, large.queueUrl, 10);
    expect(received.map((m) => m.body).sort()).toEqual(events.map((e) => e.payloadJson).sort());
    await expect.poll(() => countRows(bed.handle)).toEqual({ unsent: 0, published: 10, dead: 0 });
    await bed.stop(relay);
    // Three of them fit in 1 MiB, four do not: 3 + 3 + 3 + 1.
    expect(requests.map((sizes) => sizes.length)).toEqual([3, 3, 3, 1]);
    for (const sizes of requests)
      expect(sizes.reduce((sum, bytes) => sum + bytes, 0)).toBeLessThanOrEqual(MiB);
  });

  it("reads a lowered limit again when SNS refuses a message as too long, and kills it naming that limit", async () => {
    await clearOutbox(bed.handle);
    const topic = await bootstrapResources(stack().aws, {
      name: uniqueName("relay-size-lowered"),
      rawDelivery: true,
      maximumMessageSize: MiB,
    });
    const { lines, log } = capturingLogger();
    const relay = bed.start({ log, topicArns: { media: topic.topicArn } });
    const dead: string[] = [];
    relay.on("dead", (event) => dead.push(event.reason));
    await enqueue(bed.handle.db, [eventOf("media", KiB)]);
    expect(await receiveAll(bed.sqs, topic.queueUrl, 1)).toHaveLength(1);
    // The relay read 1 MiB before the limit is lowered under it.
    await expect.poll(() => limitsRead(lines, topic.topicArn)).toEqual([MiB]);
    await setLimit(topic.topicArn, 256 * KiB);
    const [big = ""] = await enqueue(bed.handle.db, [eventOf("media", 900 * KiB, 1)], {
      maxMessageBytes: MiB,
    });
    await expect.poll(() => dead.length, { timeout: 10_000 }).toBe(1);
    // The refusal spends an attempt and has the limit read again; the next batch checks the row
    // against the fresh limit and kills it before sending it again.
    const { error, attempts } = await deadReason(big);
    expect(attempts).toBe(2);
    expect(error).toMatch(
      new RegExp(`over the 262144-byte SNS limit \\(MaximumMessageSize of ${topic.topicArn}\\)$`),
    );
    // The topic still works at its new limit: nothing else is held up or lost.
    const [small] = await enqueue(bed.handle.db, [eventOf("media", KiB, 2)]);
    const [after] = await receiveAll(bed.sqs, topic.queueUrl, 1);
    expect(after?.attributes.event_id).toBe(small);
    await bed.stop(relay);
  });

  it("retries, with the fresh limit, a request SNS refused as too long after the limit was lowered, for one attempt", async () => {
    await clearOutbox(bed.handle);
    const topic = await bootstrapResources(stack().aws, {
      name: uniqueName("relay-size-split"),
      rawDelivery: true,
      maximumMessageSize: MiB,
    });
    const { publisher, requests } = recordingPublisher();
    const { lines, log } = capturingLogger();
    const relay = bed.start({ publisher, log, topicArns: { media: topic.topicArn } });
    const dead: string[] = [];
    relay.on("dead", (event) => dead.push(event.reason));
    await enqueue(bed.handle.db, [eventOf("media", KiB)]);
    expect(await receiveAll(bed.sqs, topic.queueUrl, 1)).toHaveLength(1);
    await expect.poll(() => limitsRead(lines, topic.topicArn)).toEqual([MiB]);
    // Each fits the lowered limit, both together do not: planned as one request, refused, split.
    await setLimit(topic.topicArn, 600 * KiB);
    const pair = [eventOf("media", 400 * KiB, 1), eventOf("media", 400 * KiB, 2)];
    await enqueue(bed.handle.db, pair, { maxMessageBytes: MiB });
    const received = await receiveAll(bed.sqs, topic.queueUrl, 2);
    expect(received.map((m) => m.body).sort()).toEqual(pair.map((e) => e.payloadJson).sort());
    await expect.poll(() => countRows(bed.handle)).toEqual({ unsent: 0, published: 3, dead: 0 });
    await bed.stop(relay);
    expect(dead).toEqual([]);
    expect(requests.map((sizes) => sizes.length)).toEqual([1, 2, 1, 1]);
    // The refusal is the rows' own (SNS answered: no outage): one attempt each, never death.
    const retried = await bed.handle.db.selectFrom("outbox").select("attempts").execute();
    expect(retried.map((row) => row.attempts).sort()).toEqual([0, 1, 1]);
  });

  it("reads a raised limit again before killing an event over the old one, and publishes it", async () => {
    await clearOutbox(bed.handle);
    const topic = await bootstrapResources(stack().aws, {
      name: uniqueName("relay-size-raised"),
      rawDelivery: true,
    });
    const relay = bed.start({ topicArns: { media: topic.topicArn } });
    await enqueue(bed.handle.db, [eventOf("media", KiB)]);
    expect(await receiveAll(bed.sqs, topic.queueUrl, 1)).toHaveLength(1);
    await setLimit(topic.topicArn, MiB);
    const event = eventOf("media", 900 * KiB, 1);
    await enqueue(bed.handle.db, [event], { maxMessageBytes: MiB });
    const [received] = await receiveAll(bed.sqs, topic.queueUrl, 1);
    expect(received?.body).toBe(event.payloadJson);
    await expect.poll(() => countRows(bed.handle)).toEqual({ unsent: 0, published: 2, dead: 0 });
    await bed.stop(relay);
  });

  it("falls back to 262 144 with a warning when a topic's limit cannot be read, bounded by the publish timeout", async () => {
    await clearOutbox(bed.handle);
    const real = createSnsPublisher(bed.sns);
    const { lines, log } = capturingLogger();
    const publisher: Publisher = {
      publishBatch: (request, deadline) => real.publishBatch(request, deadline),
      // Never answers: only the relay's bound ends the read.
      messageLimit: () => new Promise<number>(() => {}),
    };
    const relay = bed.start({ publisher, log, publishTimeoutMs: 300, topicArns: { media: large.topicArn } });
    const small = eventOf("media", KiB);
    const [big = ""] = await enqueue(bed.handle.db, [small, eventOf("media", 900 * KiB, 1)], {
      maxMessageBytes: MiB,
    }).then((ids) => [ids[1]]);
    // A set: a publish slower than the 300 ms bound (a loaded machine) is sent again, as it must be.
    expect(new Set((await receiveAll(bed.sqs, large.queueUrl, 1)).map((m) => m.body))).toEqual(
      new Set([small.payloadJson]),
    );
    // Over the fallback limit, which cannot be read again: an attempt each time, not death at once.
    await expect.poll(async () => (await deadReason(big)).attempts, { timeout: 10_000 }).toBeGreaterThan(0);
    const row = await deadReason(big);
    expect(row.error).toMatch(/over the 262144-byte SNS limit .*, which could not be read again$/);
    await bed.stop(relay);
    const warnings = lines.filter((line) =>
      line.msg?.toString().startsWith("topic message size limit unreadable"),
    );
    expect(warnings[0]).toMatchObject({
      level: "warn",
      topicArn: large.topicArn,
      maxMessageBytes: 262_144,
      timeoutMs: 300,
      reason: "no answer within 300 ms",
    });
  });
});
