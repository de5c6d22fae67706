import { enqueue, type OutboxTables } from "@outbox/client";
import { type EnqueuedEvent, enqueuedEvents, outboxMark } from "@outbox/client/testing";
import type { DatabaseHandle } from "@outbox/shared";
import { createMigratedTestDatabase } from "@outbox/test-kit";
import type { Kysely } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";

// The test kit's enqueuedEvents: the outbox rows a transaction wrote, read back as events, through
// kysely or plain pg, as an application's own test reads them.

interface OrderEvents {
  "order.placed": { orderId: string; totalCents: number };
  "order.cancelled": { orderId: string };
}

let database: DatabaseHandle;
let db: Kysely<OutboxTables>;
let pool: pg.Pool;

beforeAll(async () => {
  const { url, handle } = await createMigratedTestDatabase("enqueued_events", {
    service: "testing-test",
    poolMax: 4,
  });
  database = handle;
  db = handle.db;
  pool = new pg.Pool({ connectionString: url, max: 2 });
});
afterAll(async () => {
  await pool.end();
  await database.close(5_000);
});

/** Ends a transaction by rolling it back, once the test has read what it wrote. */
class RolledBack extends Error {}

describe("enqueuedEvents", () => {
  it("reads what a transaction enqueued, inside it, before anyone else can see it; a rollback leaves nothing", async () => {
    const mark = await outboxMark(db);
    let inside: EnqueuedEvent[] = [];
    let outside: EnqueuedEvent[] = [];
    let ids: string[] = [];

    await expect(
      db.transaction().execute(async (trx) => {
        ids = await enqueue(trx, [
          { topic: "orders", eventType: "order.placed", orderingKey: "42", payload: { orderId: "42" } },
          { topic: "orders", eventType: "order.cancelled", payload: { orderId: "41" } },
        ]);
        inside = await enqueuedEvents(trx, { after: mark });
        outside = await enqueuedEvents(db, { after: mark });
        throw new RolledBack();
      }),
    ).rejects.toThrow(RolledBack);

    expect(inside).toEqual([
      {
        id: ids[0],
        seq: expect.stringMatching(/^\d+$/),
        topic: "orders",
        type: "order.placed",
        key: "42",
        payload: { orderId: "42" },
        payloadJson: '{"orderId":"42"}',
        headers: {},
        deliverAt: null,
      },
      expect.objectContaining({ id: ids[1], type: "order.cancelled", key: null }),
    ]);
    expect(outside).toEqual([]);
    expect(await enqueuedEvents(db, { after: mark })).toEqual([]);
  });

  it("filters by type, topic, key (null: none), ids, and what came after a mark", async () => {
    const [early] = await enqueue(db, [
      { topic: "orders", eventType: "order.placed", orderingKey: "7", payload: { orderId: "7" } },
    ]);
    const mark = await outboxMark(db);
    const [placed, cancelled, unkeyed, other] = await enqueue(db, [
      { topic: "orders", eventType: "order.placed", orderingKey: "7", payload: { orderId: "7b" } },
      { topic: "orders", eventType: "order.cancelled", orderingKey: "7", payload: { orderId: "7" } },
      { topic: "orders", eventType: "order.cancelled", payload: { orderId: "8" } },
      { topic: "billing", eventType: "order.placed", orderingKey: "7", payload: { orderId: "7c" } },
    ]);
    const idsOf = (events: readonly EnqueuedEvent[]) => events.map((event) => event.id);

    // In the relay's order (seq), not necessarily the order given: a keyed row draws its seq at its
    // key's turn (migration 0014). A key's events keep the order given (below).
    expect(idsOf(await enqueuedEvents(db, { after: mark })).sort()).toEqual(
      [placed, cancelled, unkeyed, other].sort(),
    );
    expect(
      idsOf(await enqueuedEvents(db, { type: "order.placed", ids: [early ?? "", placed ?? ""] })),
    ).toEqual([early, placed]);
    expect(idsOf(await enqueuedEvents(db, { after: mark, topic: "orders", key: "7" }))).toEqual([
      placed,
      cancelled,
    ]);
    expect(idsOf(await enqueuedEvents(db, { after: mark, key: null }))).toEqual([unkeyed]);
    expect(idsOf(await enqueuedEvents(db, { after: mark, type: "order.placed", topic: "billing" }))).toEqual([
      other,
    ]);
  });

  it("keeps the payload's text as written, the headers and the due time", async () => {
    const mark = await outboxMark(db);
    const deliverAt = new Date(Date.now() + 60_000);
    await enqueue(db, [
      {
        topic: "orders",
        eventType: "order.placed",
        payloadJson: '{ "orderId": "9",  "totalCents": 100 }',
        headers: { tenant: "acme" },
        deliverAt,
      },
    ]);

    const [event] = await enqueuedEvents<OrderEvents>(db, { after: mark });

    expect(event?.payloadJson).toBe('{ "orderId": "9",  "totalCents": 100 }');
    expect(event?.payload).toEqual({ orderId: "9", totalCents: 100 });
    expect(event?.headers).toEqual({ tenant: "acme" });
    expect(event?.deliverAt).toEqual(deliverAt);
  });

  it("types each event by the event map, narrowed by its type", async () => {
    const mark = await outboxMark(db);
    await enqueue(db, [
      { topic: "orders", eventType: "order.placed", payload: { orderId: "10", totalCents: 5 } },
    ]);

    const [event] = await enqueuedEvents<OrderEvents>(db, { after: mark, type: "order.placed" });

    if (event?.type !== "order.placed") throw new Error(`expected order.placed, got ${event?.type}`);
    expectTypeOf(event.payload).toEqualTypeOf<{ orderId: string; totalCents: number }>();
    expect(event.payload.totalCents).toBe(5);
    // @ts-expect-error: not an event type of the map
    await enqueuedEvents<OrderEvents>(db, { type: "order.shipped" });
  });

  it("reads through a plain pg client or pool as through kysely", async () => {
    const mark = await outboxMark(pool);
    const id = "0193a4e0-7c1f-7000-8000-0000000000aa";
    const client = await pool.connect();
    let inside: EnqueuedEvent[];
    let outside: EnqueuedEvent[];
    try {
      // An application without kysely writes the row with its own SQL, in its own transaction.
      await client.query("BEGIN");
      await client.query(
        "INSERT INTO outbox (id, topic, event_type, payload) VALUES ($1, 'orders', 'order.placed', $2)",
        [id, '{"orderId":"11"}'],
      );
      inside = await enqueuedEvents(client, { after: mark });
      outside = await enqueuedEvents(pool, { after: mark });
      await client.query("COMMIT");
    } finally {
      client.release();
    }

    expect(inside.map((event) => [event.id, event.type, event.payloadJson])).toEqual([
      [id, "order.placed", '{"orderId":"11"}'],
    ]);
    expect(outside).toEqual([]);
    expect(await enqueuedEvents(pool, { after: mark })).toEqual(inside);
    expect(await enqueuedEvents(db, { after: mark })).toEqual(inside);
  });
});
