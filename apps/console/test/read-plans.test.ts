import type { OutboxTables } from "@outbox/client";
import { readBlockedKeys, readStatus } from "@outbox/relay/operations";
import type { DatabaseHandle } from "@outbox/shared";
import { createMigratedTestDatabase } from "@outbox/test-kit";
import { type CompiledQuery, Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deadRowGroups, deadRowIds, listDeadRows } from "../src/reads/dead-rows.js";
import { readMinuteSeries } from "../src/reads/flow.js";
import { ReplayRuns } from "../src/reads/replays.js";
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

const READS: Readonly<Record<string, (db: Kysely<OutboxTables>) => Promise<unknown>>> = {
  "the flow's backlog per topic (relay status's readStatus)": readStatus,
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

  it("the backlog per topic counts the pending rows on outbox_pending_by_seq, the dead on outbox_dead (0015)", async () => {
    const [byTopic] = await statementsOf(readStatus);
    if (byTopic === undefined) throw new Error("readStatus sent nothing");
    const indexes = (await planOf(byTopic)).map((node) => node["Index Name"]);
    expect(indexes).toContain("outbox_pending_by_seq");
    expect(indexes).toContain("outbox_dead");
  });

  it("each view reads what it shows, once: the flow no blocked-key list, the blocked keys one statement", async () => {
    // The backlog per topic and the scheduled rows; the blocked keys' list is readBlockedKeys's alone.
    expect(await statementsOf(readStatus)).toHaveLength(2);
    // The heads listed and their count, from one reading of the heads.
    expect(await statementsOf((db) => readBlockedKeys(db, BLOCKED_KEYS_LISTED))).toHaveLength(1);
  });

  it("the Replays view counts a run's rows again only once its cursor moved, not at every refresh", async () => {
    const sentNow: CompiledQuery[] = [];
    const logged = new Kysely<OutboxTables>({
      dialect: new PostgresDialect({ pool }),
      log: (event) => {
        sentNow.push(event.query);
      },
    });
    const runs = new ReplayRuns(logged);
    const first = await runs.latest();
    const sent = async () => {
      sentNow.length = 0;
      await runs.latest();
      return sentNow.length;
    };
    expect(first.map((run) => run.left).every((left) => left > 0)).toBe(true);
    expect(await sent()).toBe(1);
    await pool.query(`
      UPDATE relay_republish SET cursor_published = now() - interval '40 hours', cursor_seq = 1 WHERE sent = 20
    `);
    expect(await sent()).toBe(2);
    expect(await sent()).toBe(1);
  });

  it("the counts are the seeded ones: the plans were judged on real data", async () => {
    const status = await readStatus(handle.db);
    expect(status.total.unsent).toBe(39_000 + 1_000);
    expect(status.total.dead).toBe(2_000);
    expect(status.total.blockedKeys).toBe(1_500);
    const blocked = await readBlockedKeys(handle.db, BLOCKED_KEYS_LISTED);
    expect({ listed: blocked.keys.length, blocked: blocked.blocked }).toEqual({
      listed: 200,
      blocked: 1_500,
    });
    // Held longest first: the seeded heads died n seconds ago, key dead-key-(n % 1500), n = 1..1500.
    expect(blocked.keys[0]?.orderingKey).toBe("dead-key-0");
    expect(status.scheduled.events).toBe(1_000);
    const groups = await deadRowGroups(handle.db, {});
    expect(Object.fromEntries(groups.map((group) => [group.kind, group.count]))).toEqual({
      InvalidParameter: 666,
      other: 667,
      KMSDisabled: 667,
    });
  });
});
