import { enqueue, type NewEvent, type OutboxTables } from "@outbox/client";
import { receiveAll } from "@outbox/test-kit";
import { type Kysely, type KyselyPlugin, type RawNode, sql } from "kysely";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createRelayMetrics, RELAY_METRICS } from "../src/metrics.js";
import { notDueYet } from "../src/scheduled-rows.js";
import { clearOutbox, enqueueAll, events, relayAsleep, useRelayTestBed } from "./harness.js";

// A poll this long never fires within a test: whatever publishes here, a wake-up or the relay's
// due-time timer did.
const POLL_MS = 600_000;
const bed = useRelayTestBed("delayed", { defaults: { pollIntervalMs: POLL_MS } });

/**
 * The relay's database with its claim statements counted: every pass of the claim, whatever woke it.
 * A plugin sees every statement the relay sends through this Kysely, raw `sql` ones included.
 */
function countingClaims(db: Kysely<OutboxTables>): { db: Kysely<OutboxTables>; claims: () => number } {
  let claims = 0;
  const counter: KyselyPlugin = {
    transformQuery({ node }) {
      if (
        node.kind === "RawNode" &&
        (node as RawNode).sqlFragments.some((part) => part.includes("WITH candidates"))
      )
        claims += 1;
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  return { db: db.withPlugin(counter), claims: () => claims };
}

/** One row's state, judged by the database's clock (the one the claim compares with). */
async function rowState(id: string) {
  const { rows } = await sql<{ published: boolean; due: boolean; publishedAfterDue: boolean | null }>`
    SELECT published_at IS NOT NULL AS published, available_at <= now() AS due,
           published_at >= deliver_at AS "publishedAfterDue"
    FROM outbox WHERE id = ${id}
  `.execute(bed.handle.db);
  const row = rows[0];
  if (!row) throw new Error(`no outbox row ${id}`);
  return row;
}

const delayed = (delayMs: number, fields: Partial<NewEvent> = {}): NewEvent =>
  ({ ...events("orders", 1)[0], delayMs, ...fields }) as NewEvent;

describe("delayed events", () => {
  it("are not published before their due time, and are soon after, on a timer rather than a poll", async () => {
    await clearOutbox(bed.handle);
    const counted = countingClaims(bed.handle.db);
    const relay = bed.start({ db: counted.db });
    await expect.poll(() => relayAsleep(bed.handle)).toBe(true);

    const delayMs = 3_000;
    const claimsBefore = counted.claims();
    const [id = ""] = await enqueue(bed.handle.db, [delayed(delayMs)]);
    // The insert woke the relay (it was asleep, so the writer notified): it claimed, found nothing due,
    // and went back to sleep. The row is still pending, and still not due by the database's clock.
    await expect.poll(counted.claims).toBeGreaterThan(claimsBefore);
    await expect.poll(() => relayAsleep(bed.handle)).toBe(true);
    expect(await rowState(id)).toMatchObject({ published: false, due: false });

    await expect
      .poll(() => rowState(id), { timeout: delayMs + 10_000 })
      .toMatchObject({ published: true, publishedAfterDue: true });
    // From the insert to the publish: the wake-up, the sleep handshake's claims and the one at the due
    // time. A poll of the scheduled row (every 10 ms, say) would have claimed hundreds of times, and the
    // poll interval here is 10 minutes: the count does not grow with the wait.
    expect(counted.claims() - claimsBefore).toBeLessThanOrEqual(8);
    await bed.stop(relay);
  });

  it("wake a relay sleeping until a later due time when an earlier one is enqueued", async () => {
    await clearOutbox(bed.handle);
    const counted = countingClaims(bed.handle.db);
    const relay = bed.start({ db: counted.db });
    await expect.poll(() => relayAsleep(bed.handle)).toBe(true);
    const claimsBefore = counted.claims();
    const [late = ""] = await enqueue(bed.handle.db, [delayed(120_000)]);
    // Woken by the insert, it claimed, announced its sleep and claimed again: it now sleeps with its
    // timer set to the late row's due time (the poll interval is longer still).
    await expect.poll(counted.claims).toBeGreaterThanOrEqual(claimsBefore + 2);
    await expect.poll(() => relayAsleep(bed.handle)).toBe(true);
    const [soon = ""] = await enqueue(bed.handle.db, [delayed(1_000)]);
    await expect
      .poll(() => rowState(soon), { timeout: 15_000 })
      .toMatchObject({ published: true, publishedAfterDue: true });
    expect(await rowState(late)).toMatchObject({ published: false, due: false });
    await bed.stop(relay);
  });

  it("a delayed head holds its key: the key's later events wait behind it, other keys go on", async () => {
    await clearOutbox(bed.handle);
    const ledger = events("ledger", 4).map((event, n) => ({
      ...event,
      orderingKey: n < 3 ? "account-1" : "account-2",
    }));
    const head = { ...ledger[0], delayMs: 3_000 } as NewEvent;
    const relay = bed.start();
    const [headId = "", secondId = "", thirdId = "", otherId = ""] = await enqueue(bed.handle.db, [
      head,
      ...ledger.slice(1),
    ]);
    // The other key is published at once; account-1's events, due or not, wait for their head.
    await expect.poll(() => rowState(otherId), { timeout: 10_000 }).toMatchObject({ published: true });
    expect(await rowState(headId)).toMatchObject({ published: false, due: false });
    expect(await rowState(secondId)).toMatchObject({ published: false, due: true });
    expect(await rowState(thirdId)).toMatchObject({ published: false, due: true });

    await expect.poll(() => rowState(thirdId), { timeout: 15_000 }).toMatchObject({ published: true });
    expect(await rowState(headId)).toMatchObject({ published: true, publishedAfterDue: true });
    const { rows } = await sql<{ id: string }>`
      SELECT id FROM outbox WHERE ordering_key = 'account-1' ORDER BY published_at, seq
    `.execute(bed.handle.db);
    expect(rows.map((row) => row.id)).toEqual([headId, secondId, thirdId]);
    // The FIFO queue got the key's events in enqueue order, the delayed head first.
    const received = await receiveAll(bed.sqs, bed.fifo.queueUrl, 4);
    const ns = received.map((message) => (JSON.parse(message.body) as { n: number }).n);
    expect(ns.filter((n) => n < 3)).toEqual([0, 1, 2]);
    expect(ns).toHaveLength(4);
    await bed.stop(relay);
  });
});

describe("scheduled rows and the indexes", () => {
  it("the next-due probe and the scheduled count read outbox_scheduled; the claim still walks outbox_pending_by_seq", async () => {
    await clearOutbox(bed.handle);
    const list = events("orders", 5_000, 50).map((event, n) =>
      n % 50 === 0 ? { ...event, deliverAt: undefined, delayMs: 3_600_000 } : event,
    );
    await enqueueAll(bed.handle, list);
    await sql`UPDATE outbox SET published_at = now() WHERE deliver_at IS NULL AND seq % 10 <> 0`.execute(
      bed.handle.db,
    );
    await sql`ANALYZE outbox`.execute(bed.handle.db);
    const plan = async (query: ReturnType<typeof sql>) =>
      (await sql<{ "QUERY PLAN": string }>`EXPLAIN ${query}`.execute(bed.handle.db)).rows
        .map((row) => row["QUERY PLAN"])
        .join("\n");
    expect(await plan(sql`SELECT min(o.deliver_at) FROM outbox o WHERE ${notDueYet("o")}`)).toMatch(
      /Index Only Scan using outbox_scheduled|Index Scan using outbox_scheduled/,
    );
    expect(await plan(sql`SELECT count(*) FROM outbox o WHERE ${notDueYet("o")}`)).toMatch(
      /outbox_scheduled/,
    );
    expect(
      await plan(sql`
        SELECT o.id FROM outbox o
        WHERE o.published_at IS NULL AND o.dead_at IS NULL AND o.available_at <= now()
          AND (o.locked_until IS NULL OR o.locked_until < now())
        ORDER BY o.seq LIMIT 100 FOR UPDATE OF o SKIP LOCKED
      `),
    ).toMatch(/outbox_pending_by_seq/);
    await clearOutbox(bed.handle);
  });

  it("the lag gauge counts a scheduled row from its due time, and not at all before it", async () => {
    await clearOutbox(bed.handle);
    // A registry per read: one registry's scrapes within SCRAPE_HOLD_MS share a single reading.
    const lag = async () => {
      const registry = new Registry();
      createRelayMetrics(registry, bed.handle.db, { topicsInOutage: () => 0 });
      return (await registry.getSingleMetric(RELAY_METRICS.lag)?.get())?.values[0]?.value;
    };
    const [id = ""] = await enqueue(bed.handle.db, [delayed(3_600_000)]);
    // Enqueued two hours ago, due in an hour: not late.
    await sql`UPDATE outbox SET created_at = now() - interval '2 hours' WHERE id = ${id}`.execute(
      bed.handle.db,
    );
    expect(await lag()).toBe(0);
    // Due 30 s ago: 30 s late, not two hours.
    await sql`
      UPDATE outbox SET deliver_at = now() - interval '30 seconds', available_at = now() - interval '30 seconds'
      WHERE id = ${id}
    `.execute(bed.handle.db);
    const seconds = (await lag()) ?? Number.NaN;
    expect(seconds).toBeGreaterThanOrEqual(30);
    expect(seconds).toBeLessThan(600);
    await clearOutbox(bed.handle);
  });
});
