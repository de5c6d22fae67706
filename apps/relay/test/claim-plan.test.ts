import type { OutboxTables } from "@outbox/client";
import { type CompiledQuery, Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimBatch } from "../src/outbox-store.js";
import { clearOutbox, useRelayTestBed } from "./harness.js";

const bed = useRelayTestBed("claim_plan");
const BATCH = 500;
/** For the fills, VACUUM and EXPLAIN: no statement timeout, unlike the test bed's handle. */
let pool: pg.Pool;

beforeAll(() => {
  pool = new pg.Pool({ connectionString: bed.url, max: 2 });
});
afterAll(async () => {
  await pool.end();
});

/** The statement claimBatch sends, captured in a transaction rolled back: nothing stays leased. */
async function claimStatement(): Promise<CompiledQuery> {
  const sent: CompiledQuery[] = [];
  const db = new Kysely<OutboxTables>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      sent.push(event.query);
    },
  });
  await db
    .transaction()
    .execute(async (trx) => {
      await claimBatch(trx, "plan-test", BATCH, 60_000);
      throw new Error("rolled back on purpose");
    })
    .catch(() => {});
  const claim = sent.find((query) => query.sql.includes("WITH candidates"));
  if (claim === undefined) throw new Error("the claim statement was not captured");
  return claim;
}

/** The claim really run (and rolled back) under EXPLAIN: the pages it touched, and its plan. */
async function explainClaim(): Promise<{ pages: number; plan: string }> {
  const claim = await claimStatement();
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const { rows } = await client.query<{ "QUERY PLAN": [{ Plan: Record<string, number> }] }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${claim.sql}`,
      [...claim.parameters],
    );
    await client.query("ROLLBACK");
    const [explained] = rows[0]?.["QUERY PLAN"] ?? [];
    if (explained === undefined) throw new Error("EXPLAIN returned no plan");
    const { Plan: top } = explained;
    return {
      pages: (top["Shared Hit Blocks"] ?? 0) + (top["Shared Read Blocks"] ?? 0),
      plan: JSON.stringify(explained),
    };
  } finally {
    client.release();
  }
}

describe("the claim", () => {
  it("stays O(batch) as published history grows: no scan of the outbox, about the same pages", {
    timeout: 120_000,
  }, async () => {
    await clearOutbox(bed.handle);
    // A backlog of 100 000 pending events over 1 000 keys, written server-side.
    await pool.query(`
      INSERT INTO outbox (id, topic, ordering_key, event_type, payload, headers)
      SELECT gen_random_uuid(), 'orders', 'key-' || (n % 1000), 'test.happened', json_build_object('n', n), '{}'::jsonb
      FROM generate_series(1, 100000) AS n
    `);
    await pool.query("VACUUM ANALYZE outbox");
    const fresh = await explainClaim();

    // 300 000 rows a relay published over the last days, written server-side, then analyzed as
    // autovacuum would: with these statistics a NOT EXISTS inside the claim's OR was planned as a
    // hashed SubPlan, one pass over the whole outbox per claim.
    await pool.query(`
      INSERT INTO outbox (id, topic, ordering_key, event_type, payload, headers, created_at,
                          available_at, published_at)
      SELECT gen_random_uuid(), 'orders', 'key-' || (n % 50), 'test.happened', json_build_object('n', n),
             '{}'::jsonb, now() - interval '3 days' + n * interval '1 second',
             now() - interval '3 days' + n * interval '1 second', now() - interval '3 days' + n * interval '1 second'
      FROM generate_series(1, 300000) AS n
    `);
    await pool.query("VACUUM ANALYZE outbox");
    const grown = await explainClaim();

    expect(fresh.plan).not.toMatch(/"Seq Scan"/);
    expect(grown.plan).not.toMatch(/"Seq Scan"/);
    // 300 000 published rows are thousands of pages: a claim that read them would be far over this.
    expect(grown.pages).toBeLessThan(fresh.pages * 1.5 + 100);
  });
});
