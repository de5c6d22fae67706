import { uuidv7 } from "@outbox/client";
import { receiveAll } from "@outbox/test-kit";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { type Publisher, RelayOptionsError } from "../src/index.js";
import { clearOutbox, countRows, enqueueAll, events, useRelayTestBed } from "./harness.js";

const bed = useRelayTestBed("lib", { defaults: { pollIntervalMs: 200 } });
const { start, stop } = bed;

describe("createRelay against the local SNS → SQS stack", () => {
  it("delivers every event exactly once, with event_id, event_type and headers as attributes", async () => {
    await clearOutbox(bed.handle);
    const relay = start();
    const ids = await enqueueAll(bed.handle, events("orders", 250));
    const received = await receiveAll(bed.sqs, bed.standard.queueUrl, ids.length);
    expect(received).toHaveLength(250);
    expect(new Set(received.map((m) => m.attributes.event_id))).toEqual(new Set(ids));
    const first = received.find((m) => m.attributes.event_id === ids[0]);
    expect(first?.attributes).toMatchObject({
      event_type: "test.happened",
      traceparent: expect.stringMatching(/^00-/),
    });
    expect(JSON.parse(first?.body ?? "null")).toEqual({ n: 0 });
    await expect.poll(() => countRows(bed.handle)).toEqual({ unsent: 0, published: 250, dead: 0 });
    const summary = await stop(relay);
    expect(summary).toMatchObject({ clean: true, published: 250, unsent: 0, dead: 0 });
  });

  it("keeps per-key order with two relays on one table, and neither publishes an event twice", async () => {
    await clearOutbox(bed.handle);
    const ids = await enqueueAll(bed.handle, events("ledger", 600, 60));
    const a = start({ batchSize: 20, relayId: "relay-a" });
    const b = start({ batchSize: 20, relayId: "relay-b" });
    let fromA = 0;
    let fromB = 0;
    a.on("batch", (report) => {
      fromA += report.published;
    });
    b.on("batch", (report) => {
      fromB += report.published;
    });
    // 600 events through the emulators, which a loaded machine slows: a hang limit, not a pace.
    const received = await receiveAll(bed.sqs, bed.fifo.queueUrl, ids.length, { timeoutMs: 120_000 });
    await Promise.all([stop(a), stop(b)]);
    expect(received).toHaveLength(600);
    expect(new Set(received.map((m) => m.attributes.event_id)).size).toBe(600);
    expect(fromA + fromB).toBe(600);
    expect(fromA).toBeGreaterThan(0);
    expect(fromB).toBeGreaterThan(0);
    const byKey = new Map<number, number[]>();
    for (const message of received) {
      const { n } = JSON.parse(message.body) as { n: number };
      byKey.set(n % 60, [...(byKey.get(n % 60) ?? []), n]);
    }
    expect(byKey.size).toBe(60);
    for (const ns of byKey.values()) expect(ns).toEqual([...ns].sort((x, y) => x - y));
  }, 180_000);

  it("marks an event for an unknown topic and an oversized event dead at once, with the reason", async () => {
    await clearOutbox(bed.handle);
    const relay = start();
    const dead: { id: string; reason: string }[] = [];
    relay.on("dead", (event) => dead.push(event));
    const [unknown] = await enqueueAll(bed.handle, [{ topic: "nowhere", eventType: "x", payload: {} }]);
    // enqueue refuses this one (attributes included it is over the limit), so it is written as another
    // writer, or a row from before migration 0006, could have: the relay must still refuse to send it.
    const headers = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`h${i}`, "v".repeat(1_000)]));
    const oversized = uuidv7();
    await bed.handle.db
      .insertInto("outbox")
      .values({
        id: oversized,
        topic: "orders",
        event_type: "x",
        ordering_key: null,
        payload: JSON.stringify({ blob: "x".repeat(256 * 1024 - 100) }),
        headers: JSON.stringify(headers),
      })
      .execute();
    const [fine] = await enqueueAll(bed.handle, [{ topic: "orders", eventType: "x", payload: {} }]);
    await expect.poll(() => dead.length, { timeout: 10_000 }).toBe(2);
    const rows = await bed.handle.db
      .selectFrom("outbox")
      .select(["id", "dead_at", "last_error", "published_at", "attempts"])
      .execute();
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(byId.get(unknown ?? "")?.last_error).toMatch(/unknown topic "nowhere"/);
    expect(byId.get(oversized)?.last_error).toMatch(/over the 262144-byte SNS limit/);
    expect(byId.get(unknown ?? "")?.dead_at).toBeInstanceOf(Date);
    expect(byId.get(oversized)?.attempts).toBe(1);
    await expect.poll(async () => (await countRows(bed.handle)).published).toBe(1);
    expect((await receiveAll(bed.sqs, bed.standard.queueUrl, 1)).map((m) => m.attributes.event_id)).toEqual([
      fine,
    ]);
    expect(await stop(relay)).toMatchObject({ dead: 2, published: 1 });
  });

  it("streams other keys through free lanes while a key waits, and sends a key's next event only once the one before is marked", async () => {
    await clearOutbox(bed.handle);
    const slowArn = "arn:aws:sns:us-east-1:000000000000:slow";
    // Interleaved in seq order: a1 b1 a2 b2 a3 b3 b4 b5 b6. Key a on a topic of its own, so its
    // requests carry only its rows; its first one is held unanswered until key b is through.
    const plan: [topic: string, key: string, n: number][] = [
      ["slow", "a", 1],
      ["fast", "b", 1],
      ["slow", "a", 2],
      ["fast", "b", 2],
      ["slow", "a", 3],
      ...[3, 4, 5, 6].map((n): [string, string, number] => ["fast", "b", n]),
    ];
    await enqueueAll(
      bed.handle,
      plan.map(([topic, key, n]) => ({
        topic,
        eventType: "test.happened",
        payload: { key, n },
        orderingKey: key,
      })),
    );
    let releaseSlow = () => {};
    const slowHeld = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    const sent: string[] = [];
    const inFlight = new Set<string>();
    const problems: string[] = [];
    const publisher: Publisher = {
      async publishBatch({ topicArn, entries }) {
        const events = entries.map((entry) => JSON.parse(entry.message) as { key: string; n: number });
        for (const { key, n } of events) {
          if (inFlight.has(key)) problems.push(`${key}${n} sent while its key had one in flight`);
          inFlight.add(key);
          // Every earlier event of the key must be marked published by now.
          const { rows } = await sql<{ unmarked: string }>`
            SELECT count(*) AS unmarked FROM outbox
            WHERE ordering_key = ${key} AND published_at IS NULL AND (payload->>'n')::int < ${n}
          `.execute(bed.handle.db);
          if (Number(rows[0]?.unmarked) !== 0)
            problems.push(`${key}${n} sent before ${key}${n - 1} was marked`);
          sent.push(`${key}${n}`);
        }
        if (topicArn === slowArn && events.some(({ n }) => n === 1)) await slowHeld;
        for (const { key } of events) inFlight.delete(key);
        return { published: entries.map((entry) => entry.id), failed: [] };
      },
    };
    const relay = start({
      publisher,
      topicArns: { slow: slowArn, fast: "arn:aws:sns:us-east-1:000000000000:fast" },
      publishConcurrency: 2,
    });
    // Key b's six events go out one after the other through the other lane while a1 is unanswered:
    // no wave waits for the slowest request of the one before.
    await expect
      .poll(() => sent.filter((event) => event.startsWith("b")), { timeout: 10_000 })
      .toHaveLength(6);
    expect(sent.filter((event) => event.startsWith("a"))).toEqual(["a1"]);
    releaseSlow();
    await expect.poll(async () => (await countRows(bed.handle)).published, { timeout: 10_000 }).toBe(9);
    expect(sent.filter((event) => event.startsWith("a"))).toEqual(["a1", "a2", "a3"]);
    expect(sent.filter((event) => event.startsWith("b"))).toEqual(["b1", "b2", "b3", "b4", "b5", "b6"]);
    expect(problems).toEqual([]);
    expect(await stop(relay)).toMatchObject({ clean: true, published: 9 });
  });

  it("claims through the partial index outbox_pending_by_seq", async () => {
    await clearOutbox(bed.handle);
    await enqueueAll(bed.handle, events("orders", 20_000, 50));
    await sql`UPDATE outbox SET published_at = now() WHERE seq % 100 <> 0`.execute(bed.handle.db);
    await sql`ANALYZE outbox`.execute(bed.handle.db);
    const { rows } = await sql<{ "QUERY PLAN": string }>`
      EXPLAIN
      WITH candidates AS (
        SELECT o.id, o.seq, o.ordering_key FROM outbox o
        WHERE o.published_at IS NULL AND o.dead_at IS NULL AND o.available_at <= now()
          AND (o.locked_until IS NULL OR o.locked_until < now())
        ORDER BY o.seq LIMIT 100 FOR UPDATE OF o SKIP LOCKED
      ) SELECT * FROM candidates
    `.execute(bed.handle.db);
    expect(rows.map((row) => row["QUERY PLAN"]).join("\n")).toMatch(/outbox_pending_by_seq/);
    // The claim's dead-head probe, once per keyed candidate: a lookup in the (empty) outbox_dead_heads,
    // not a walk of the key's rows.
    const probe = await sql<{ "QUERY PLAN": string }>`
      EXPLAIN SELECT 1 FROM outbox d
      WHERE d.ordering_key = 'key-7' AND d.dead_at IS NOT NULL AND d.published_at IS NULL AND d.skipped_at IS NULL
    `.execute(bed.handle.db);
    expect(probe.rows.map((row) => row["QUERY PLAN"]).join("\n")).toMatch(/outbox_dead_heads/);
    await clearOutbox(bed.handle);
  });
});

describe("createRelay options", () => {
  it("refuses what the daemon would refuse in its RELAY_… form, with the same reason", () => {
    expect(() => start({ batchSize: 0 })).toThrow(
      new RelayOptionsError("batchSize: must be between 1 and 1000 (got 0)"),
    );
    expect(() => start({ pollIntervalMs: 2.5 })).toThrow("pollIntervalMs: expected a whole number (got 2.5)");
    expect(() => start({ pipelineDepth: 9 })).toThrow(
      new RelayOptionsError("pipelineDepth: must be between 1 and 8 (got 9)"),
    );
    expect(() => start({ backoff: { baseMs: 5_000, maxMs: 1_000 } })).toThrow(
      "backoff.baseMs: 5000 must not exceed backoff.maxMs (1000)",
    );
    expect(() => start({ backoff: { baseMs: 1_000, maxMs: 10_000 }, outageBackoffMaxMs: 500 })).toThrow(
      "backoff.baseMs: 1000 must not exceed outageBackoffMaxMs (500)",
    );
    // The daemon's lease rule, with one publish in the place of the drain it has no budget for.
    expect(() => start({ leaseMs: 10_000, publishTimeoutMs: 8_000, leaseMarginMs: 2_000 })).toThrow(
      new RelayOptionsError(
        "publishTimeoutMs: 8000 ms + leaseMarginMs (2000 ms) = 10000 ms must be less than leaseMs (10000 ms): a row must stay leased while the drain may still publish or mark it, or another relay publishes it twice",
      ),
    );
  });
});
