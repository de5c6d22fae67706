import {
  enqueue,
  enqueueWith,
  migrateToLatest,
  migrations,
  OutboxValidationError,
  uuidv7,
} from "@outbox/client";
import {
  INSERT_IN_FLIGHT_LOCK,
  MAX_MESSAGE_BYTES,
  OUTBOX_CHANNEL,
  OUTBOX_LOCK_SPACE,
  RELAY_ASLEEP_LOCK,
} from "@outbox/client/internal";
import { createDatabase, type DatabaseHandle, type PlanCacheMode } from "@outbox/shared";
import { createTestDatabase } from "@outbox/test-kit";
import { Migrator, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { watchPoolReplacement } from "./pool-replacement.js";

let url: string;
let handle: DatabaseHandle;

beforeAll(async () => {
  url = await createTestDatabase("shared_db");
  handle = createDatabase({
    url,
    service: "shared-test",
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 10_000,
  });
  await migrateToLatest(handle.db);
  // A business table of the test's own: the outbox's schema has none, and the photo service's
  // tables are that service's (apps/api).
  await sql`CREATE TABLE photos (id uuid PRIMARY KEY, title text NOT NULL)`.execute(handle.db);
});
afterAll(async () => {
  await handle.close(5_000);
});

describe("migrations", () => {
  it("create outbox and inbox on an empty database, and a second run applies nothing", async () => {
    const tables = await sql<{ table_name: string }>`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name
    `.execute(handle.db);
    expect(tables.rows.map((row) => row.table_name)).toEqual(
      expect.arrayContaining(["inbox", "outbox", "outbox_migration", "outbox_migration_lock"]),
    );
    expect(await migrateToLatest(handle.db)).toEqual([]);
  });

  it("0006 stores the payload as json, verbatim; down makes it jsonb again and up restores json", async () => {
    const column = async () =>
      (
        await sql<{ type: string }>`
          SELECT data_type AS type FROM information_schema.columns
          WHERE table_name = 'outbox' AND column_name = 'payload'
        `.execute(handle.db)
      ).rows[0]?.type;
    const [id = ""] = await enqueue(handle.db, [
      { topic: "orders", eventType: "x", payloadJson: '{"b":1, "a" :2}' },
    ]);
    const text = async () =>
      (
        await sql<{ text: string }>`SELECT payload::text AS text FROM outbox WHERE id = ${id}`.execute(
          handle.db,
        )
      ).rows[0]?.text;
    expect([await column(), await text()]).toEqual(["json", '{"b":1, "a" :2}']);

    const migrator = new Migrator({
      db: handle.db,
      provider: { getMigrations: async () => migrations },
      migrationTableName: "outbox_migration",
      migrationLockTableName: "outbox_migration_lock",
    });
    // The outbox migration before 0006 (0005 was the photo service's; it has a set of its own now).
    const { error, results } = await migrator.migrateTo("0004_relay_hot_claims");
    expect(error).toBeUndefined();
    expect(results).toContainEqual(
      expect.objectContaining({
        migrationName: "0006_outbox_payload_verbatim",
        direction: "Down",
        status: "Success",
      }),
    );
    expect([await column(), await text()]).toEqual(["jsonb", '{"a": 2, "b": 1}']);

    expect(await migrateToLatest(handle.db)).toHaveLength(results?.length ?? 0);
    expect([await column(), await text()]).toEqual(["json", '{"a": 2, "b": 1}']);
    await sql`DELETE FROM outbox WHERE id = ${id}`.execute(handle.db);
  });

  it("configure every pooled connection with the service's name and server-side timeouts", async () => {
    const settings = await sql<{ application_name: string; statement_timeout: string; idle: string }>`
      SELECT current_setting('application_name') AS application_name,
             current_setting('statement_timeout') AS statement_timeout,
             current_setting('idle_in_transaction_session_timeout') AS idle
    `.execute(handle.db);
    expect(settings.rows[0]).toEqual({
      application_name: "shared-test",
      statement_timeout: "5s",
      idle: "10s",
    });
  });
});

describe("the pool's connection lifetime", () => {
  it("replaces a connection once it is DB_POOL_MAX_LIFETIME_SECONDS old, and no query fails meanwhile", async () => {
    const lifetimeSeconds = 1;
    // A query every 50 ms: any of them failing fails the test.
    const { first, next, queries, firstStillOpen } = await watchPoolReplacement(url, {
      lifetimeSeconds,
      queryEveryMs: 50,
      timeoutMs: lifetimeSeconds * 1_000 + 10_000,
    });
    expect(queries).toBeGreaterThan(2);
    // Replaced at the lifetime, not before it.
    expect(next.startedMs - first.startedMs).toBeGreaterThanOrEqual(lifetimeSeconds * 1_000);
    expect(firstStillOpen).toBe(0);
  });

  it("refuses a lifetime of 0, which pg reads as never replacing a connection", () => {
    expect(() =>
      createDatabase({
        url,
        service: "lifetime-test",
        poolMaxLifetimeSeconds: 0,
        statementTimeoutMs: 5_000,
        idleInTransactionTimeoutMs: 10_000,
      }),
    ).toThrow("poolMaxLifetimeSeconds: must be between 1 and 86400 (got 0)");
  });
});

const POOL_TIMEOUTS = { statementTimeoutMs: 5_000, idleInTransactionTimeoutMs: 10_000 } as const;

describe("prepared statements", () => {
  it("prepare each parameterised statement once per connection, and again after a migration changed its result", async () => {
    const single = createDatabase({
      url,
      service: "prepared-test",
      poolMax: 1,
      statementTimeoutMs: 5_000,
      idleInTransactionTimeoutMs: 10_000,
    });
    await sql`CREATE TABLE prepared_probe (id int PRIMARY KEY, label int)`.execute(single.db);
    await sql`INSERT INTO prepared_probe VALUES (1, 7)`.execute(single.db);
    const read = () =>
      sql<{ label: unknown }>`SELECT label FROM prepared_probe WHERE id = ${1}`.execute(single.db);
    const prepared = async () =>
      (
        await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`.execute(single.db)
      ).rows.filter((row) => row.statement.includes("prepared_probe")).length;
    try {
      await read();
      await read();
      expect(await prepared()).toBe(1);
      await sql`ALTER TABLE prepared_probe ALTER COLUMN label TYPE text`.execute(single.db);
      await expect(read()).rejects.toThrow("cached plan must not change result type");
      expect((await read()).rows).toEqual([{ label: "7" }]);
      expect(await prepared()).toBe(2);
    } finally {
      await sql`DROP TABLE prepared_probe`.execute(single.db);
      await single.close(5_000);
    }
  });

  it("name a statement after its text: one name never stands for two texts, on any connection", async () => {
    const pool = createDatabase({ url, service: "names-test", poolMax: 2, ...POOL_TIMEOUTS });
    try {
      // Two connections, each preparing a different first statement: a counter per connection
      // would name both `outbox_0`, and a pooler could run either in place of the other.
      const named = await Promise.all(
        ["SELECT $1::int + 0 AS n", "SELECT $1::int + 1 AS n"].map(async (text, index) => {
          const client = await pool.pool.connect();
          try {
            await client.query(text, [index]);
            const { rows } = await client.query<{ name: string; statement: string }>(
              "SELECT name, statement FROM pg_prepared_statements",
            );
            return rows;
          } finally {
            client.release();
          }
        }),
      );
      const texts = new Map<string, Set<string>>();
      for (const { name, statement } of named.flat())
        texts.set(name, (texts.get(name) ?? new Set()).add(statement));
      expect(texts.size).toBe(2);
      for (const statements of texts.values()) expect(statements.size).toBe(1);
    } finally {
      await pool.close(5_000);
    }
  });

  it("run a statement unprepared when the server holds another under its name", async () => {
    const text = "SELECT $1::int AS n";
    const other = createDatabase({ url, service: "clash-test", poolMax: 1, ...POOL_TIMEOUTS });
    const single = createDatabase({ url, service: "clash-test", poolMax: 1, ...POOL_TIMEOUTS });
    try {
      await sql`SELECT ${1}::int AS n`.execute(other.db);
      const { rows: names } = await sql<{ name: string }>`
        SELECT name FROM pg_prepared_statements WHERE statement = ${text}
      `.execute(other.db);
      const client = await single.pool.connect();
      try {
        // What a pooler's server connection may hold: the name this text gets, for other SQL.
        await client.query(`PREPARE ${names[0]?.name} (int) AS SELECT $1::int + 1000 AS n`);
        const { rows } = await client.query<{ n: number }>(text, [7]);
        expect(rows).toEqual([{ n: 7 }]);
      } finally {
        client.release();
      }
    } finally {
      await Promise.all([single.close(5_000), other.close(5_000)]);
    }
  });

  it("plan each run for its parameters unless the pool asks for Postgres's auto mode", async () => {
    // The plan the statement's next run gets, after ten: EXPLAIN EXECUTE shows the parameter's value
    // in a custom plan and `$1` in the generic one (pg_prepared_statements counts plans only from 14).
    const planAfterTenRuns = async (planCacheMode?: PlanCacheMode) => {
      const single = createDatabase({
        url,
        service: "plan-test",
        poolMax: 1,
        statementTimeoutMs: 5_000,
        idleInTransactionTimeoutMs: 10_000,
        planCacheMode,
      });
      try {
        for (let run = 0; run < 10; run++) {
          await sql`SELECT count(*) FROM outbox WHERE topic = ${"plan-probe"}`.execute(single.db);
        }
        const { rows } = await sql<{ name: string }>`
          SELECT name FROM pg_prepared_statements WHERE statement LIKE ${"%FROM outbox WHERE topic%"}
        `.execute(single.db);
        expect(rows).toHaveLength(1);
        const plan = await sql<{ "QUERY PLAN": string }>`
          EXPLAIN (COSTS OFF) EXECUTE ${sql.id(rows[0]?.name ?? "")}('plan-probe')
        `.execute(single.db);
        const text = plan.rows.map((row) => row["QUERY PLAN"]).join("\n");
        return text.includes("$1") ? "generic" : text.includes("'plan-probe'") ? "custom" : text;
      } finally {
        await single.close(5_000);
      }
    };
    expect(await planAfterTenRuns()).toBe("custom");
    expect(await planAfterTenRuns("auto")).toBe("generic");
  });
});

describe("enqueue", () => {
  it("writes nothing when the caller's transaction rolls back", async () => {
    const rollback = new Error("business rule failed");
    await expect(
      handle.db.transaction().execute(async (trx) => {
        await enqueue(trx, [{ topic: "orders", eventType: "order.placed", payload: { orderId: 1 } }]);
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    const { count } = await handle.db
      .selectFrom("outbox")
      .select((eb) => eb.fn.countAll<string>().as("count"))
      .executeTakeFirstOrThrow();
    expect(Number(count)).toBe(0);
  });

  it("inserts all events in one statement, in order, with ids, keys and headers", async () => {
    const ids = await handle.db.transaction().execute((trx) =>
      enqueue(trx, [
        { topic: "orders", eventType: "order.placed", payload: { n: 1 }, orderingKey: "order-1" },
        {
          topic: "orders",
          eventType: "order.paid",
          payload: { n: 2 },
          headers: { traceparent: "00-abc-def-01" },
        },
      ]),
    );
    const rows = await handle.db
      .selectFrom("outbox")
      .selectAll()
      .where("id", "in", ids)
      .orderBy("seq")
      .execute();
    expect(rows.map((row) => row.id)).toEqual(ids);
    expect(rows[0]).toMatchObject({
      ordering_key: "order-1",
      payload: { n: 1 },
      attempts: 0,
      published_at: null,
    });
    expect(rows[1]?.headers).toEqual({ traceparent: "00-abc-def-01" });
    expect(BigInt(rows[1]?.seq ?? 0)).toBeGreaterThan(BigInt(rows[0]?.seq ?? 0));
  });

  it("rejects bad events with the index and reason before touching the database", async () => {
    const oversized = { blob: "x".repeat(MAX_MESSAGE_BYTES) };
    await expect(
      enqueue(handle.db, [
        { topic: "orders", eventType: "ok", payload: {} },
        { topic: "orders", eventType: "big", payload: oversized },
      ]),
    ).rejects.toThrow(
      // attributes: event_id + String + 36-character id, event_type + String + "big"
      "event #1: message would be 262224 bytes (payload 262155 + attributes 69), over the 262144-byte SNS limit",
    );
    await expect(enqueue(handle.db, [{ topic: "", eventType: "x", payload: {} }])).rejects.toBeInstanceOf(
      OutboxValidationError,
    );
  });

  it("refuses headers the relay could not send as message attributes", async () => {
    const reject = (headers: Record<string, string>) =>
      expect(enqueue(handle.db, [{ topic: "orders", eventType: "x", payload: {}, headers }])).rejects;
    await reject({ "aws.trace": "x" }).toThrow(
      'event #0: header name "aws.trace" is not a valid SNS message',
    );
    await reject({ traceparent: "" }).toThrow('event #0: header "traceparent" must be a non-empty string');
    await reject(Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`h${i}`, "v"]))).toThrow(
      "event #0: 9 headers: SNS takes 10 message attributes",
    );
  });

  it("measures event_id as Postgres stores it, whatever form of the UUID the caller passed", async () => {
    // 32 characters given, 36 sent: 4 bytes over the limit, though the caller's form would fit.
    const id = uuidv7().replaceAll("-", "").toUpperCase();
    const attributes = "event_idString".length + 36 + "event_typeString".length + 1;
    const payloadJson = JSON.stringify("x".repeat(MAX_MESSAGE_BYTES - attributes + 4 - 2));
    await expect(enqueue(handle.db, [{ id, topic: "orders", eventType: "x", payloadJson }])).rejects.toThrow(
      `message would be ${MAX_MESSAGE_BYTES + 4} bytes`,
    );
  });

  const listen = async () => {
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    const received: string[] = [];
    listener.on("notification", (message) => received.push(message.channel));
    await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);
    return { listener, received };
  };
  const twoEventsThen = (whileOpen: () => Promise<void>) =>
    handle.db.transaction().execute(async (trx) => {
      await enqueue(trx, [
        { topic: "orders", eventType: "a", payload: {} },
        { topic: "orders", eventType: "b", payload: {} },
      ]);
      await whileOpen();
    });

  it("notifies a LISTEN connection while a relay is asleep: once per insert statement, at commit", async () => {
    const { listener, received } = await listen();
    await listener.query("SELECT pg_advisory_lock_shared($1, $2)", [OUTBOX_LOCK_SPACE, RELAY_ASLEEP_LOCK]);
    await twoEventsThen(async () => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(received).toEqual([]);
    });
    await expect.poll(() => received, { timeout: 10_000 }).toEqual([OUTBOX_CHANNEL]);
    await listener.end();
  });

  it("sends no NOTIFY while no relay is asleep, and holds the in-flight lock until it commits", async () => {
    const { listener, received } = await listen();
    const inFlightFree = async () => {
      const { rows } = await listener.query<{ free: boolean }>(
        "SELECT pg_try_advisory_lock($1, $2) AND pg_advisory_unlock($1, $2) AS free",
        [OUTBOX_LOCK_SPACE, INSERT_IN_FLIGHT_LOCK],
      );
      return rows[0]?.free;
    };
    await twoEventsThen(async () => {
      expect(await inFlightFree()).toBe(false);
    });
    expect(await inFlightFree()).toBe(true);
    // A NOTIFY would arrive within milliseconds of the commit.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received).toEqual([]);
    await listener.end();
  });
});

describe("enqueueWith", () => {
  const business = () => handle.db.withTables<{ photos: { id: string; title: string } }>();
  const photoCount = async (id: string) =>
    (await business().selectFrom("photos").select("id").where("id", "=", id).execute()).length;
  const withPhoto = (photoId: string) => (rows: Parameters<Parameters<typeof enqueueWith>[1]>[0]) =>
    business()
      .with("photo", (db) => db.insertInto("photos").values({ id: photoId, title: "cte" }))
      .insertInto("outbox")
      .values(rows)
      .execute();

  it("writes the business row and the events in the caller's one statement, all or nothing", async () => {
    const photoId = uuidv7();
    const [eventId = ""] = await enqueueWith(
      [{ topic: "photos", eventType: "photo.posted", payload: { photoId } }],
      withPhoto(photoId),
    );
    expect(await photoCount(photoId)).toBe(1);
    const event = await handle.db
      .selectFrom("outbox")
      .selectAll()
      .where("id", "=", eventId)
      .executeTakeFirst();
    expect(event).toMatchObject({ event_type: "photo.posted", payload: { photoId } });

    // The same event id again: the outbox part of the statement fails, so its photo is not written.
    const second = uuidv7();
    await expect(
      enqueueWith(
        [{ id: eventId, topic: "photos", eventType: "photo.posted", payload: {} }],
        withPhoto(second),
      ),
    ).rejects.toMatchObject({ code: "23505" });
    expect(await photoCount(second)).toBe(0);
  });

  it("checks the events before the statement runs: a bad one writes nothing", async () => {
    const photoId = uuidv7();
    let wrote = false;
    await expect(
      enqueueWith([{ topic: "no spaces allowed", eventType: "x", payload: {} }], async (rows) => {
        wrote = true;
        await withPhoto(photoId)(rows);
      }),
    ).rejects.toBeInstanceOf(OutboxValidationError);
    expect(wrote).toBe(false);
    expect(await photoCount(photoId)).toBe(0);
  });
});

describe("uuidv7", () => {
  it("is a valid version-7 UUID and strictly increasing within a process", () => {
    const ids = Array.from({ length: 5_000 }, () => uuidv7());
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("never reuses randomness across the pool's refills", () => {
    // 5 000 ids take the pool through many refills; 48 random bits repeating by chance: ~1 in 10^7.
    const tails = Array.from({ length: 5_000 }, () => uuidv7().slice(-12));
    expect(new Set(tails).size).toBe(tails.length);
  });
});
