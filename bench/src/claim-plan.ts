/**
 * The relay's claim statement as the database sees it, and its EXPLAIN: shared by
 * bench/tools/explain-claim.ts and the growth scenario, so both explain the claim itself rather
 * than a copy of its SQL.
 */
import type { OutboxTables as Database } from "@outbox/client";
import { Kysely, PostgresDialect } from "kysely";
import type pg from "pg";
// Below the relay's public API: the claim's SQL is what is explained.
import { claimBatch } from "../../apps/relay/src/outbox-store.js";

/** Text only the claim statement holds: picks it out of a Kysely query log. */
export const CLAIM_MARKER = "WITH candidates";

export interface CapturedStatement {
  sql: string;
  parameters: readonly unknown[];
}

/** Captures the claim statement for `batchSize` rows, in a transaction rolled back: nothing is leased. */
export async function captureClaim(pool: pg.Pool, batchSize: number): Promise<CapturedStatement> {
  const captured: CapturedStatement[] = [];
  // Its own Kysely on the pool: destroying it would end the caller's pool.
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      captured.push({ sql: event.query.sql, parameters: event.query.parameters });
    },
  });
  await db
    .transaction()
    .execute(async (trx) => {
      await claimBatch(trx, "explain", batchSize, 60_000);
      throw new Error("rollback");
    })
    .catch(() => {});
  const claim = captured.find((statement) => statement.sql.includes(CLAIM_MARKER));
  if (!claim) throw new Error("claim not captured");
  return claim;
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of a statement, run and rolled back: the statement really executes (the
 * buffers are its own), but what it writes is undone. TEXT gives the plan's lines, JSON one line.
 */
export async function explainAnalyze(
  pool: pg.Pool,
  statement: CapturedStatement,
  format: "TEXT" | "JSON",
): Promise<string[]> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const { rows } = await client.query<{ "QUERY PLAN": unknown }>(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON, FORMAT ${format}) ${statement.sql}`,
      statement.parameters as unknown[],
    );
    await client.query("ROLLBACK");
    return rows.map((row) =>
      typeof row["QUERY PLAN"] === "string" ? row["QUERY PLAN"] : JSON.stringify(row["QUERY PLAN"]),
    );
  } finally {
    client.release();
  }
}

/** What one claim touched: shared buffers hit and read, over the whole plan, and its time. */
export interface ClaimBuffers {
  sharedHit: number;
  sharedRead: number;
  executionMs: number;
  rows: number;
  /** The plan itself (EXPLAIN's JSON), for the report's raw figures: which indexes the claim used. */
  plan: unknown;
}

interface JsonPlan {
  Plan: { "Shared Hit Blocks": number; "Shared Read Blocks": number; "Actual Rows": number };
  "Execution Time": number;
}

/**
 * The buffers one claim of `batchSize` touches on the outbox as it stands. The top node's counts
 * include every node below it (the CTEs and their index probes): the claim's whole cost in pages.
 */
export async function claimBuffers(pool: pg.Pool, batchSize: number): Promise<ClaimBuffers> {
  const [json] = await explainAnalyze(pool, await captureClaim(pool, batchSize), "JSON");
  const [plan] = JSON.parse(json ?? "[]") as JsonPlan[];
  if (!plan) throw new Error("EXPLAIN returned no plan");
  return {
    sharedHit: plan.Plan["Shared Hit Blocks"],
    sharedRead: plan.Plan["Shared Read Blocks"],
    executionMs: Number(plan["Execution Time"].toFixed(2)),
    rows: plan.Plan["Actual Rows"],
    plan,
  };
}
