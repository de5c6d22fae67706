import { enqueue, migrateToLatest, type NewEvent } from "@outbox/client";
import { ORDERING_KEY_LOCK_SPACE, orderingKeyLock } from "@outbox/client/internal";
import { createDatabase, type DatabaseHandle } from "@outbox/shared";
import { createTestDatabase, waitUntil } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The producers' side of per-key order (migration 0014): a key's `seq` order is its commit order.
// The relay's side, with relays killed and producers racing, is apps/relay/test/key-order-chaos.test.ts.

let handle: DatabaseHandle;

beforeAll(async () => {
  const url = await createTestDatabase("key_order");
  handle = createDatabase({
    url,
    service: "key-order-test",
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 10_000,
  });
  await migrateToLatest(handle.db);
});
afterAll(async () => {
  await handle.close(5_000);
});

const event = (orderingKey: string | null, n: number): NewEvent => ({
  topic: "orders",
  eventType: "order.changed",
  payload: { n },
  orderingKey,
});

/** A transaction left open until the test commits (or rolls back) it. */
async function open() {
  return handle.db.startTransaction().execute();
}

/** The ordering-key locks sessions are waiting for, as lock numbers. */
async function awaitedKeyLocks(): Promise<number[]> {
  const { rows } = await sql<{ lock: string }>`
    SELECT objid::bigint AS lock FROM pg_locks
    -- Advisory locks are per database: the other test files' relays hold theirs on the same server.
    WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND classid = ${ORDERING_KEY_LOCK_SPACE} AND objsubid = 2 AND NOT granted
  `.execute(handle.db);
  // pg_locks shows the int4 as an unsigned oid.
  return rows.map((row) => Number(row.lock) | 0);
}

async function seqOf(ids: readonly string[]): Promise<Map<string, bigint>> {
  const rows = await handle.db.selectFrom("outbox").select(["id", "seq"]).where("id", "in", ids).execute();
  return new Map(rows.map((row) => [row.id, BigInt(row.seq)]));
}

describe("a key's seq order is its commit order", () => {
  it("a second producer of a key waits for the first's commit and is sequenced after it", async () => {
    const first = await open();
    const [early = ""] = await enqueue(first, [event("ключ-7", 1)]);
    const secondDone = handle.db.transaction().execute((trx) => enqueue(trx, [event("ключ-7", 2)]));
    // The lock number the trigger waits on is the one enqueue computes (non-ASCII key: UTF-8 both sides).
    await waitUntil("the second producer waiting for the key", async () =>
      (await awaitedKeyLocks()).includes(orderingKeyLock("ключ-7")),
    );
    await first.commit().execute();
    const [late = ""] = await secondDone;
    const seqs = await seqOf([early, late]);
    expect(seqs.get(late)).toBeGreaterThan(seqs.get(early) ?? Number.POSITIVE_INFINITY);
  });

  it("a rolled-back producer frees the key, and its successor commits alone", async () => {
    const first = await open();
    await enqueue(first, [event("order-rb", 1)]);
    const secondDone = handle.db.transaction().execute((trx) => enqueue(trx, [event("order-rb", 2)]));
    await waitUntil("the second producer waiting for the key", async () =>
      (await awaitedKeyLocks()).includes(orderingKeyLock("order-rb")),
    );
    await first.rollback().execute();
    const ids = await secondDone;
    const rows = await handle.db
      .selectFrom("outbox")
      .select("id")
      .where("ordering_key", "=", "order-rb")
      .execute();
    expect(rows.map((row) => row.id)).toEqual(ids);
  });

  it("other keys and unkeyed events do not wait for a held key", async () => {
    const holder = await open();
    await enqueue(holder, [event("held", 1)]);
    // Both commit while the holder is still open: a wait would never end before the holder does.
    const ids = await handle.db
      .transaction()
      .execute((trx) => enqueue(trx, [event("other", 1), event(null, 2), event(null, 3)]));
    expect((await seqOf(ids)).size).toBe(3);
    expect(await awaitedKeyLocks()).toEqual([]);
    await holder.commit().execute();
  });

  it("a transaction's own events of a key keep the order they were given, across keys sorted for locking", async () => {
    const given = ["k-3", "k-1", "k-3", "k-2", "k-1", null, "k-3"].map((key, n) => event(key, n));
    const ids = await handle.db.transaction().execute((trx) => enqueue(trx, given));
    const seqs = await seqOf(ids);
    for (const key of ["k-1", "k-2", "k-3"]) {
      const ofKey = ids.filter((_, n) => given[n]?.orderingKey === key).map((id) => seqs.get(id) ?? 0n);
      expect(ofKey, key).toEqual([...ofKey].sort((a, b) => (a < b ? -1 : 1)));
    }
  });

  it("two transactions enqueuing the same keys in opposite orders in one call each do not deadlock", async () => {
    // `low` takes its lock before `high` whatever order a call gives them in.
    const [low, high] = ["pair-a", "pair-b"].sort((a, b) => orderingKeyLock(a) - orderingKeyLock(b)) as [
      string,
      string,
    ];
    const holder = await open();
    await enqueue(holder, [event(low, 0)]);
    // Both wait for `low`. Taken in the given order, `reversed` would hold `high` meanwhile, and `inOrder`,
    // given `low` once the holder commits, would wait for `high`: a cycle Postgres ends by aborting one.
    // They queue for `low` in this order, so `inOrder` gets it first.
    const inOrder = handle.db.transaction().execute((trx) => enqueue(trx, [event(low, 1), event(high, 2)]));
    await waitUntil(
      "the first producer waiting for the held key",
      async () => (await awaitedKeyLocks()).length === 1,
    );
    const reversed = handle.db.transaction().execute((trx) => enqueue(trx, [event(high, 3), event(low, 4)]));
    await waitUntil(
      "both producers waiting for the held key",
      async () => (await awaitedKeyLocks()).length === 2,
    );
    await holder.commit().execute();
    await expect(Promise.all([inOrder, reversed])).resolves.toHaveLength(2);
  });

  it("a role that may only insert into the outbox enqueues keyed events (the trigger needs no grant)", async () => {
    const role = `outbox_writer_${process.pid}`;
    await sql.raw(`CREATE ROLE ${role}`).execute(handle.db);
    await sql.raw(`GRANT INSERT ON outbox TO ${role}`).execute(handle.db);
    try {
      const ids = await handle.db.transaction().execute(async (trx) => {
        await sql.raw(`SET LOCAL ROLE ${role}`).execute(trx);
        return enqueue(trx, [event("granted", 1)]);
      });
      expect((await seqOf(ids)).size).toBe(1);
    } finally {
      await sql.raw(`DROP OWNED BY ${role}`).execute(handle.db);
      await sql.raw(`DROP ROLE ${role}`).execute(handle.db);
    }
  });
});
