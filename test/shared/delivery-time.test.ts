import { enqueue, enqueueWith, migrateToLatest, type NewEvent, OutboxValidationError } from "@outbox/client";
import { createDatabase, type DatabaseHandle } from "@outbox/shared";
import { createTestDatabase } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let handle: DatabaseHandle;

beforeAll(async () => {
  handle = createDatabase({
    url: await createTestDatabase("delivery_time"),
    service: "delivery-time-test",
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 10_000,
  });
  await migrateToLatest(handle.db);
});
afterAll(async () => {
  await handle.close(5_000);
});

const WEEK_MS = 7 * 24 * 60 * 60 * 1_000;
const event = (fields: Partial<NewEvent> = {}): NewEvent =>
  ({ topic: "orders", eventType: "order.placed", payload: { n: 1 }, ...fields }) as NewEvent;

async function stored(id: string) {
  return handle.db
    .selectFrom("outbox")
    .select(["created_at", "available_at", "deliver_at"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
}

async function outboxCount(): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM outbox`.execute(handle.db);
  return Number(rows[0]?.n);
}

describe("enqueue's delivery time", () => {
  it("delayMs counts on the database's clock from the INSERT, in both due columns", async () => {
    const [id = "", times] = await handle.db.transaction().execute(async (trx) => {
      const clock = () =>
        sql<{ at: Date }>`SELECT statement_timestamp() AS at`.execute(trx).then(({ rows }) => rows[0]?.at);
      const before = await clock();
      const [eventId] = await enqueue(trx, [event({ delayMs: 1_500 })]);
      const after = await clock();
      return [eventId, { before, after }] as const;
    });
    const row = await stored(id);
    expect(row.deliver_at).toEqual(row.available_at);
    const dueMs = row.available_at.getTime();
    // statement_timestamp() of the INSERT, which lies between the statements around it.
    expect(dueMs).toBeGreaterThanOrEqual((times.before?.getTime() ?? Number.NaN) + 1_500);
    expect(dueMs).toBeLessThanOrEqual((times.after?.getTime() ?? Number.NaN) + 1_500);
    expect(dueMs - row.created_at.getTime()).toBeGreaterThanOrEqual(1_500);
  });

  it("deliverAt is stored as given; without either the event is due at once and has no deliver_at", async () => {
    const at = new Date(Date.now() + 60_000);
    const [scheduled = "", immediate = "", past = ""] = await enqueue(handle.db, [
      event({ deliverAt: at }),
      event(),
      event({ deliverAt: new Date(Date.now() - 60_000) }),
    ]);
    expect(await stored(scheduled)).toMatchObject({ available_at: at, deliver_at: at });
    const plain = await stored(immediate);
    expect(plain.deliver_at).toBeNull();
    expect(plain.available_at).toEqual(plain.created_at);
    // A time already past is kept as asked; the event is due at once.
    expect((await stored(past)).available_at.getTime()).toBeLessThan(Date.now());
  });

  it("enqueueWith hands the caller's statement rows that carry the due time", async () => {
    const [id = ""] = await enqueueWith([event({ delayMs: 10_000 })], (rows) =>
      handle.db.insertInto("outbox").values(rows).execute(),
    );
    const row = await stored(id);
    expect(row.deliver_at).toEqual(row.available_at);
    expect(row.available_at.getTime() - row.created_at.getTime()).toBeGreaterThanOrEqual(10_000);
  });

  it("refuses a bad delivery time with the event's position and the reason, writing nothing", async () => {
    const cases: [Partial<NewEvent>, string][] = [
      [
        { delayMs: 5, deliverAt: new Date() } as unknown as Partial<NewEvent>,
        "give deliverAt or delayMs, not both",
      ],
      [{ delayMs: Number.NaN }, "delayMs must be a finite number of milliseconds, got NaN"],
      [
        { delayMs: Number.POSITIVE_INFINITY },
        "delayMs must be a finite number of milliseconds, got Infinity",
      ],
      [
        { delayMs: "5" } as unknown as Partial<NewEvent>,
        "delayMs must be a finite number of milliseconds, got 5",
      ],
      [{ delayMs: -1 }, "delayMs must not be negative, got -1"],
      [{ delayMs: WEEK_MS + 1 }, `delayMs must be at most ${WEEK_MS} ms (7 days), got ${WEEK_MS + 1}`],
      [{ deliverAt: new Date(Number.NaN) }, "deliverAt must be a valid Date, got Invalid Date"],
      [
        { deliverAt: "2030-01-01" } as unknown as Partial<NewEvent>,
        "deliverAt must be a valid Date, got 2030-01-01",
      ],
    ];
    const before = await outboxCount();
    for (const [fields, reason] of cases) {
      const attempt = enqueue(handle.db, [event(), event(fields)]);
      await expect(attempt).rejects.toThrow(new OutboxValidationError(1, reason));
      await expect(attempt).rejects.toMatchObject({ name: "OutboxValidationError", index: 1 });
    }
    const tooFar = new Date(Date.now() + WEEK_MS + 60_000);
    await expect(enqueue(handle.db, [event({ deliverAt: tooFar })])).rejects.toThrow(
      new RegExp(
        `^event #0: deliverAt must be at most ${WEEK_MS} ms \\(7 days\\) ahead, got ${tooFar.toISOString()} \\(\\d+ ms ahead\\)$`,
      ),
    );
    expect(await outboxCount()).toBe(before);
  });
});
