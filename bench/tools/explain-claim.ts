/**
 * EXPLAIN (ANALYZE, BUFFERS) of the claim and the marks on a 50 000-event backlog, fresh and after
 * half of it was drained (dead index entries, published history), plus round trips per batch.
 *
 *   pnpm exec tsx --conditions=development bench/tools/explain-claim.ts [batchSize]
 */

import os from "node:os";
import { type OutboxTables as Database, enqueue } from "@outbox/client";
import { startEmbeddedPostgres } from "@outbox/devstack";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
// The claim and the marks themselves, below the relay's public API: their SQL is what is explained.
import { claimBatch, markPublished } from "../../apps/relay/src/outbox-store.js";
import { type CapturedStatement, captureClaim, explainAnalyze } from "../src/claim-plan.js";
import { benchEvent, freshDatabase, ourBacklog } from "../src/fixtures.js";
import { parentPid, postgresCpuSeconds } from "../src/measure.js";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 50_000);
const batchSize = Number(process.argv[2] ?? 500);

const postgres = await startEmbeddedPostgres();
try {
  const { url, handle } = await freshDatabase(postgres.adminUrl);
  if (process.env.BENCH_NO_ANALYZE === "1") {
    // As the latency scenario sees it: a table that grew after creation and was never analyzed.
    for (let at = 0; at < EVENTS; at += 100)
      await enqueue(
        handle.db,
        Array.from({ length: 100 }, (_, i) => benchEvent(at + i)),
      );
  } else await ourBacklog(handle, EVENTS);
  await handle.close(5_000);

  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const postmasterPid = parentPid((await pool.query("SELECT pg_backend_pid() AS pid")).rows[0].pid);
  const captured: CapturedStatement[] = [];
  let roundTrips = 0;
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      roundTrips += 1;
      captured.push({ sql: event.query.sql, parameters: event.query.parameters });
    },
  });
  const explain = async (label: string, statement: CapturedStatement) => {
    const plan = await explainAnalyze(pool, statement, "TEXT");
    console.log(`\n==== ${label}\n${plan.join("\n")}`);
  };
  const drain = async (events: number) => {
    let done = 0;
    const before = roundTrips;
    const pgBefore = postgresCpuSeconds(postmasterPid);
    const cpuBefore = process.cpuUsage();
    let batches = 0;
    const t0 = performance.now();
    while (done < events) {
      const rows = await claimBatch(db, "explain", batchSize, 60_000);
      if (rows.length === 0) break;
      for (let at = 0; at < rows.length; at += 50) {
        await markPublished(
          db,
          rows.slice(at, at + 50).map((r) => r.id),
        );
      }
      done += rows.length;
      batches += 1;
    }
    const ms = performance.now() - t0;
    const pgCpu = postgresCpuSeconds(postmasterPid) - pgBefore;
    const cpu = process.cpuUsage(cpuBefore);
    console.log(
      `Postgres CPU ${((pgCpu / done) * 1e6).toFixed(1)} µs/event, this process ${((cpu.user + cpu.system) / done).toFixed(1)} µs/event, load ${os.loadavg()[0]?.toFixed(2)}`,
    );
    console.log(
      `\ndrained ${done} in ${batches} batches, ${((ms / done) * 1000).toFixed(1)} µs/event wall, ${((roundTrips - before) / batches).toFixed(1)} round trips per batch (marks in chunks of 50)`,
    );
  };

  const claim = await captureClaim(pool, batchSize);
  await explain(`claim, batch ${batchSize}, fresh backlog`, claim);
  const drained = Number(process.env.BENCH_DRAIN ?? EVENTS / 2);
  await drain(drained);
  await explain(`claim, batch ${batchSize}, after ${drained} drained`, claim);
  // A mark of 50 claimed rows.
  const rows = await claimBatch(db, "explain", batchSize, 60_000);
  captured.length = 0;
  await db
    .transaction()
    .execute(async (trx) => {
      await markPublished(
        trx,
        rows.slice(0, 50).map((r) => r.id),
      );
      throw new Error("rollback");
    })
    .catch(() => {});
  const mark = captured.find((c) => c.sql.includes("published_at = now()"));
  if (mark) await explain("mark published, 50 rows", mark);
  const stats = await pool.query(
    "SELECT last_autoanalyze, last_autovacuum, n_tup_upd, n_tup_hot_upd, n_dead_tup, pg_size_pretty(pg_relation_size('outbox')) heap, pg_size_pretty(pg_relation_size('outbox_pending_by_seq')) by_seq, pg_size_pretty(pg_relation_size('outbox_pending_by_key')) by_key FROM pg_stat_user_tables WHERE relname = 'outbox'",
  );
  console.log(stats.rows[0]);
  await db.destroy();
} finally {
  await postgres.stop();
}
