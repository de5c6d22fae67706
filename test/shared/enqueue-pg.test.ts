import { randomUUID } from "node:crypto";
import {
  enqueue,
  enqueuePg,
  enqueueWith,
  migrateToLatest,
  type NewEvent,
  type OutboxTables,
  OutboxValidationError,
} from "@outbox/client";
import { createTestDatabase } from "@outbox/test-kit";
import { type CompiledQuery, Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * `enqueuePg`, the plain-pg way in, against `enqueue`, the kysely one: the same events make the
 * same statement and the same rows. The pg side is a bare `pg.Client` and a `PoolClient`, each in a
 * transaction of its own, as an application not on kysely has them.
 */
let pool: pg.Pool;
/** Every statement kysely sent, as it sent it. */
const sent: CompiledQuery[] = [];
let db: Kysely<OutboxTables>;
let url: string;

beforeAll(async () => {
  url = await createTestDatabase("enqueue_pg");
  pool = new pg.Pool({ connectionString: url, max: 2 });
  db = new Kysely<OutboxTables>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      sent.push(event.query);
    },
  });
  await migrateToLatest(db);
});
afterAll(async () => {
  await db?.destroy();
});

/** An hour ahead, the same instant for every call of events(). */
const deliverAt = new Date(Date.now() + 3_600_000);

/** The same events under fresh ids: keyed (two keys, out of lock order), unkeyed, every optional field. */
function events(): NewEvent[] {
  return [
    { topic: "orders", eventType: "order.placed", orderingKey: "k-2", payload: { n: 1 }, id: randomUUID() },
    { topic: "orders", eventType: "order.placed", orderingKey: "k-1", payload: { n: 2 }, id: randomUUID() },
    {
      topic: "audit",
      eventType: "audit.noted",
      payloadJson: '{ "kept":  "as written" }',
      headers: { tenant: "t-1" },
      deliverAt,
      id: randomUUID(),
    },
    { topic: "audit", eventType: "audit.later", payload: [1, "two"], delayMs: 60_000, id: randomUUID() },
  ];
}

/**
 * The rows as stored, in seq order, without what differs by design: id, seq, and the clock's columns
 * (compared with what they must hold instead).
 */
async function storedRows(ids: readonly string[]) {
  const { rows } = await sql<Record<string, unknown>>`
    SELECT topic, ordering_key, event_type, payload::text AS payload, headers, attempts,
           deliver_at = ${deliverAt} AS due_at_given, available_at = deliver_at AS due_as_asked,
           locked_until, locked_by,
           published_at, dead_at, skipped_at, last_error,
           -- delayMs counts from the INSERT's statement_timestamp(), at least the transaction's start
           available_at >= created_at + interval '60 seconds' AS delay_kept
      FROM outbox WHERE id = ANY(${[...ids]}::uuid[]) ORDER BY seq`.execute(db);
  return rows;
}

describe("enqueuePg", () => {
  it("sends the statement enqueue sends: the same SQL, the same parameters", async () => {
    const given = events();
    await db
      .transaction()
      .execute(async (trx) => {
        await enqueue(trx, given);
        throw new Error("roll back");
      })
      .catch(() => undefined);
    const kyselyInsert = sent.find((query) => query.sql.startsWith('insert into "outbox"'));

    const recorded: { text: string; values: unknown[] }[] = [];
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await enqueuePg(
        {
          query: (text, values) => {
            recorded.push({ text, values });
            return client.query(text, values);
          },
        },
        given,
      );
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
    expect(kyselyInsert).toBeDefined();
    expect(recorded).toEqual([{ text: kyselyInsert?.sql, values: kyselyInsert?.parameters }]);
  });

  it("writes, in the client's own transaction, the rows enqueue writes", async () => {
    const byKysely = events();
    await db.transaction().execute((trx) => enqueue(trx, byKysely));

    const byPg = events();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query("BEGIN");
      const ids = await enqueuePg(client, byPg);
      expect(ids).toEqual(byPg.map((event) => event.id));
      await client.query("COMMIT");
    } finally {
      await client.end();
    }

    const expected = await storedRows(byKysely.map((event) => event.id ?? ""));
    expect(expected).toHaveLength(4);
    // Written in key-lock order by both: the keyed rows' seq order is not the order given.
    expect(expected.map((row) => row.ordering_key)).not.toEqual(byKysely.map((e) => e.orderingKey ?? null));
    expect(expected.find((row) => row.event_type === "audit.noted")?.payload).toBe(
      '{ "kept":  "as written" }',
    );
    expect(expected.find((row) => row.event_type === "audit.later")?.delay_kept).toBe(true);
    expect(expected.map((row) => row.due_at_given)).toContain(true);
    expect(await storedRows(byPg.map((event) => event.id ?? ""))).toEqual(expected);
  });

  it("rolls back with the client's transaction, and writes nothing for an event it refuses", async () => {
    const rolledBack = events();
    const refused = events();
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await enqueuePg(client, rolledBack);
      await client.query("ROLLBACK");
      await client.query("BEGIN");
      const error = await enqueuePg(client, [
        ...refused,
        { topic: "bad topic", eventType: "x", payload: 1 },
      ]).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OutboxValidationError);
      expect((error as Error).message).toMatch(/^event #4: topic must match/);
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    const ids = [...rolledBack, ...refused].map((event) => event.id ?? "");
    expect(await storedRows(ids)).toEqual([]);
  });

  it("12 000 events in one call: written in several statements under Postgres's 65 535 parameters, in order", async () => {
    // Six parameters an event: 72 000 in one statement, which pg's bind message cannot count (08P01).
    const many = (tag: string): NewEvent[] =>
      Array.from({ length: 12_000 }, (_, n) => ({
        topic: "bulk",
        eventType: `bulk.${tag}`,
        orderingKey: `k-${n % 3}`,
        payload: { n },
        id: randomUUID(),
      }));
    const byKysely = many("kysely");
    const byPg = many("pg");
    await db.transaction().execute((trx) => enqueue(trx, byKysely));
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await enqueuePg(client, byPg);
      await client.query("COMMIT");
    } finally {
      client.release();
    }
    for (const given of [byKysely, byPg]) {
      // Every event, and each key's in the order given (seq), across the statements.
      const { rows } = await sql<{ ordering_key: string; n: number }>`
        SELECT ordering_key, (payload->>'n')::int AS n FROM outbox
        WHERE event_type = ${given[0]?.eventType ?? ""} ORDER BY seq`.execute(db);
      expect(rows).toHaveLength(12_000);
      for (const key of ["k-0", "k-1", "k-2"]) {
        const order = rows.filter((row) => row.ordering_key === key).map((row) => row.n);
        expect(order).toEqual([...order].sort((a, b) => a - b));
      }
    }
  });

  it("enqueueWith's one statement cannot take them: an OutboxValidationError naming the limit, nothing written", async () => {
    const events = Array.from({ length: 12_000 }, (_, n) => ({
      topic: "bulk",
      eventType: "bulk.with",
      payload: { n },
    }));
    let written = 0;
    const error = await enqueueWith(events, async (rows) => {
      written += rows.length;
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OutboxValidationError);
    expect((error as Error).message).toMatch(
      /^event #\d+: 12000 events take more than Postgres's 65535 parameters in one statement/,
    );
    expect(written).toBe(0);
  });
});
