import type { OutboxTables } from "@outbox/client";
import { readBlockedKeys } from "@outbox/relay/operations";
import type { DatabaseHandle } from "@outbox/shared";
import { createMigratedTestDatabase } from "@outbox/test-kit";
import { type CompiledQuery, Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COUNT_CAP, readBacklog } from "../src/reads/backlog.js";
import { deadRowGroups, deadRowIds, listDeadRows } from "../src/reads/dead-rows.js";
import { readMinuteSeries } from "../src/reads/flow.js";
import { LEFT_CAP, ReplayRuns } from "../src/reads/replays.js";
import { BLOCKED_KEYS_LISTED } from "../src/views/blocked-keys.js";

/*
 * Every statement a console page sends, planned on an outbox of a million rows shaped like a
 * long-lived one: nearly all of it published history, a backlog, dead rows (blocked keys and skipped
 * ones), scheduled rows, an inbox, republish runs. None may read the outbox or the inbox whole.
 */
const HISTORY = 950_000;

let url: string;
let handle: DatabaseHandle;
/** For the fill, ANALYZE and EXPLAIN: no statement timeout, unlike the test database's handle. */
let pool: pg.Pool;

beforeAll(async () => {
  ({ url, handle } = await createMigratedTestDatabase("console_plans", { service: "console-test" }));
  pool = new pg.Pool({ connectionString: url, max: 2 });
  // Published history over three days, the last hour included (no key: the key trigger is not what is measured).
  await pool.query(`
    INSERT INTO outbox (id, topic, event_type, payload, created_at, available_at, published_at)
    SELECT gen_random_uuid(), 'topic-' || (n % 5), 'order.placed', json_build_object('n', n),
           now() - (n * interval '270 milliseconds'), now() - (n * interval '270 milliseconds'),
           now() - (n * interval '270 milliseconds') + interval '40 milliseconds'
    FROM generate_series(1, ${HISTORY}) AS n
  `);
  // A backlog of 40 000 over 2 000 keys, 1 000 of them scheduled for later.
  await pool.query(`
    INSERT INTO outbox (id, topic, ordering_key, event_type, payload, deliver_at, available_at)
    SELECT gen_random_uuid(), 'topic-' || (n % 5), 'key-' || (n % 2000), 'order.placed', '{}'::json,
           CASE WHEN n <= 1000 THEN now() + interval '1 hour' END,
           CASE WHEN n <= 1000 THEN now() + interval '1 hour' ELSE now() END
    FROM generate_series(1, 40000) AS n
  `);
  // 2 000 dead rows: heads of 1 500 keys, 500 of them skipped.
  await pool.query(`
    INSERT INTO outbox (id, topic, ordering_key, event_type, payload, attempts, dead_at, skipped_at, last_error)
    SELECT gen_random_uuid(), 'topic-' || (n % 5), 'dead-key-' || (n % 1500), 'order.placed', '{}'::json, 5,
           now() - n * interval '1 second', CASE WHEN n > 1500 THEN now() END,
           CASE n % 3 WHEN 0 THEN 'after 5 attempts: InvalidParameter: bad attribute'
                      WHEN 1 THEN 'no topic ARN for topic ' || n ELSE 'KMSDisabled: key disabled' END
    FROM generate_series(1, 2000) AS n
  `);
  await pool.query(`
    INSERT INTO inbox (consumer, event_id, message_id, processed_at)
    SELECT 'consumer-' || (n % 2), gen_random_uuid(), 'm-' || n, now() - n * interval '2 seconds'
    FROM generate_series(1, 200000) AS n
  `);
  await pool.query(`
    INSERT INTO relay_republish (id, from_published, to_published, rate, cursor_published, cursor_seq, sent)
    SELECT gen_random_uuid(), now() - interval '2 days', now() - interval '1 day', 100,
           CASE WHEN n = 1 THEN now() - interval '36 hours' END, CASE WHEN n = 1 THEN 500000 END, n * 10
    FROM generate_series(1, 3) AS n
  `);
  await pool.query("VACUUM ANALYZE outbox");
  await pool.query("VACUUM ANALYZE inbox");
  await pool.query("ANALYZE relay_republish");
}, 600_000);

afterAll(async () => {
  await pool?.end();
  await handle?.close(5_000);
});

/** The statements `read` sends, captured as sent (each runs for real: reads change nothing). */
async function statementsOf(read: (db: Kysely<OutboxTables>) => Promise<unknown>): Promise<CompiledQuery[]> {
  const sent: CompiledQuery[] = [];
  const db = new Kysely<OutboxTables>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      sent.push(event.query);
    },
  });
  await read(db);
  return sent;
}

interface PlanNode {
  readonly "Node Type": string;
  readonly "Relation Name"?: string;
  readonly "Index Name"?: string;
  readonly "Actual Rows"?: number;
  readonly "Actual Loops"?: number;
  readonly Plans?: readonly PlanNode[];
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

async function planOf(query: CompiledQuery): Promise<PlanNode[]> {
  const { rows } = await pool.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
    `EXPLAIN (FORMAT JSON) ${query.sql}`,
    [...query.parameters],
  );
  const plan = rows[0]?.["QUERY PLAN"][0]?.Plan;
  if (plan === undefined) throw new Error("EXPLAIN returned no plan");
  return nodesOf(plan);
}

/** The most rows any node of `query`'s plan, run, got from the outbox (EXPLAIN ANALYZE; reads change nothing). */
async function mostRowsOfOutbox(query: CompiledQuery): Promise<number> {
  const { rows } = await pool.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
    `EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ${query.sql}`,
    [...query.parameters],
  );
  const plan = rows[0]?.["QUERY PLAN"][0]?.Plan;
  if (plan === undefined) throw new Error("EXPLAIN returned no plan");
  return Math.max(
    0,
    ...nodesOf(plan)
      .filter((node) => node["Relation Name"] === "outbox")
      .map((node) => (node["Actual Rows"] ?? 0) * (node["Actual Loops"] ?? 1)),
  );
}

const READS: Readonly<Record<string, (db: Kysely<OutboxTables>) => Promise<unknown>>> = {
  "the flow's backlog per topic (readBacklog)": readBacklog,
  "the flow's last hour per minute": readMinuteSeries,
  "the blocked keys (relay status's readBlockedKeys)": (db) => readBlockedKeys(db, BLOCKED_KEYS_LISTED),
  "the dead rows, unfiltered": (db) => listDeadRows(db, {}),
  "the dead rows of a kind, topic and age": (db) =>
    listDeadRows(db, { kind: "InvalidParameter", topic: "topic-1", olderThanSeconds: 300 }),
  "the dead rows' groups": (db) => deadRowGroups(db, {}),
  "a skip's preview of a group": (db) => deadRowIds(db, { kind: "KMSDisabled", holdingKey: true }, 10_001),
  "the replays and what each has left": (db) => new ReplayRuns(db).latest(),
  "a resume's preview of one run": async (db) => {
    const { rows } = await pool.query<{ id: string }>("SELECT id FROM relay_republish WHERE sent = 10");
    return new ReplayRuns(db).one(rows[0]?.id ?? "");
  },
};

describe("the console's reads, on a million-row outbox", () => {
  for (const [name, read] of Object.entries(READS)) {
    it(`${name}: served by indexes, no sequential scan of the outbox or the inbox`, async () => {
      const statements = await statementsOf(read);
      expect(statements.length).toBeGreaterThan(0);
      for (const statement of statements) {
        const nodes = await planOf(statement);
        const scanned = nodes
          .filter((node) => node["Node Type"] === "Seq Scan")
          .map((node) => node["Relation Name"]);
        expect(scanned, statement.sql).not.toContain("outbox");
        expect(scanned, statement.sql).not.toContain("inbox");
      }
    });
  }

  it("the backlog reads the pending rows on outbox_pending_by_seq, the dead on outbox_dead (0015)", async () => {
    const [pending, dead] = await statementsOf(readBacklog);
    if (pending === undefined || dead === undefined) throw new Error("readBacklog sent nothing");
    expect((await planOf(pending)).map((node) => node["Index Name"])).toContain("outbox_pending_by_seq");
    expect((await planOf(dead)).map((node) => node["Index Name"])).toContain("outbox_dead");
  });

  it("a backlog past the cap is not read past it: counts capped (N+), the total Postgres's estimate", async () => {
    const cap = COUNT_CAP;
    expect(cap).toBeLessThan(40_000);
    const statements = await statementsOf((db) => readBacklog(db, cap));
    for (const statement of statements) {
      expect(await mostRowsOfOutbox(statement), statement.sql).toBeLessThanOrEqual(cap + 1);
    }
    const backlog = await readBacklog(handle.db, cap);
    expect(backlog.capped).toBe(true);
    expect(backlog.total.unsent.kind).toBe("estimate");
    // reltuples of the pending index after the VACUUM ANALYZE above: the backlog's 40 000, about.
    expect(backlog.total.unsent.value).toBeGreaterThan(30_000);
    expect(backlog.total.unsent.value).toBeLessThan(50_000);
    expect(new Set(backlog.topics.map((topic) => topic.unsent.kind))).toEqual(new Set(["at least"]));
    expect(backlog.topics.reduce((sum, topic) => sum + topic.unsent.value, 0)).toBe(cap + 1);
    expect(backlog.scheduled.events).toEqual({ value: 1_000, kind: "exact" });
  });

  it("each view reads what it shows, once: the flow no blocked-key list, the blocked keys one statement", async () => {
    // The pending rows, the dead, the scheduled; under the cap, no estimate.
    expect(await statementsOf((db) => readBacklog(db, 100_000))).toHaveLength(3);
    // The heads listed and their count, from one reading of the heads.
    expect(await statementsOf((db) => readBlockedKeys(db, BLOCKED_KEYS_LISTED))).toHaveLength(1);
  });

  it("the Replays view counts a run once, capped, and not again as its cursor moves", async () => {
    const sentNow: CompiledQuery[] = [];
    const logged = new Kysely<OutboxTables>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => {
        sentNow.push(event.query);
      },
    });
    const runs = new ReplayRuns(logged);
    const first = await runs.latest();
    for (const statement of sentNow) {
      expect(await mostRowsOfOutbox(statement), statement.sql).toBeLessThanOrEqual(LEFT_CAP + 1);
    }
    const sent = async () => {
      sentNow.length = 0;
      const latest = await runs.latest();
      return { statements: sentNow.length, latest };
    };
    // The seeded ranges hold a day of history each (some 320 000 rows): more than LEFT_CAP.
    expect(first.map((run) => [run.left, run.leftCapped])).toEqual(first.map(() => [LEFT_CAP, true]));
    expect((await sent()).statements).toBe(1);
    // The run moves a batch: what it passed is taken off, nothing counted.
    await pool.query(`
      UPDATE relay_republish SET cursor_published = from_published + interval '1 minute', cursor_seq = 0,
             sent = sent + 100 WHERE sent = 20
    `);
    const moved = await sent();
    expect(moved.statements).toBe(1);
    expect(moved.latest.find((run) => run.sent === 120)).toMatchObject({
      left: LEFT_CAP - 100,
      leftCapped: true,
    });
    // Past half the capped count: counted again, exactly now (the cursor near the range's end).
    await pool.query(`
      UPDATE relay_republish SET cursor_published = to_published - interval '10 minutes', cursor_seq = 0,
             sent = sent + ${LEFT_CAP} WHERE sent = 120
    `);
    const recounted = await sent();
    expect(recounted.statements).toBe(2);
    const near = recounted.latest.find((run) => run.sent === LEFT_CAP + 120);
    expect(near?.leftCapped).toBe(false);
    const { rows } = await pool.query<{ left: string }>(`
      SELECT count(*) AS left FROM outbox o, relay_republish r
      WHERE r.sent = ${LEFT_CAP + 120} AND o.published_at IS NOT NULL
        AND (o.published_at, o.seq) > (r.cursor_published, r.cursor_seq) AND o.published_at < r.to_published
    `);
    expect(near?.left).toBe(Number(rows[0]?.left));
    await pool.query(`UPDATE relay_republish SET sent = sent + 10 WHERE sent = ${LEFT_CAP + 120}`);
    const after = await sent();
    expect(after.statements).toBe(1);
    expect(after.latest.find((run) => run.sent === LEFT_CAP + 130)?.left).toBe((near?.left ?? 0) - 10);
  });

  it("the counts are the seeded ones: the plans were judged on real data", async () => {
    // A cap above the seeded backlog: counted exactly.
    const status = await readBacklog(handle.db, 100_000);
    expect(status.capped).toBe(false);
    expect(status.total.unsent).toEqual({ value: 39_000 + 1_000, kind: "exact" });
    expect(status.total.dead).toBe(2_000);
    expect(status.total.blockedKeys).toBe(1_500);
    const blocked = await readBlockedKeys(handle.db, BLOCKED_KEYS_LISTED);
    expect({ listed: blocked.keys.length, blocked: blocked.blocked }).toEqual({
      listed: 200,
      blocked: 1_500,
    });
    // Held longest first: the seeded heads died n seconds ago, key dead-key-(n % 1500), n = 1..1500.
    expect(blocked.keys[0]?.orderingKey).toBe("dead-key-0");
    expect(status.scheduled.events).toEqual({ value: 1_000, kind: "exact" });
    const groups = await deadRowGroups(handle.db, {});
    expect(Object.fromEntries(groups.map((group) => [group.kind, group.count]))).toEqual({
      InvalidParameter: 666,
      other: 667,
      KMSDisabled: 667,
    });
  });
});
