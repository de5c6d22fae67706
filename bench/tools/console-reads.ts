/**
 * What the operator console's views cost the database on a large outbox: each view's database time
 * (the planning and execution time EXPLAIN ANALYZE reports for every statement the view sends, the
 * view read afresh: nothing shared or kept), then ten tabs refreshing for a minute (the page's live
 * refresh: one request in flight, every 5 s), as the CPU time Postgres's processes used over it.
 * Measured at each backlog of BENCH_PENDING (pending rows, beside a published history, dead rows, an
 * inbox and a republish run under way); the suite checks the plans and the sharing (read-plans,
 * shared-reads tests), this tool the figures.
 *
 *   pnpm exec tsx --conditions=development bench/tools/console-reads.ts
 *
 * BENCH_PENDING (default 1000000,4000000), BENCH_TABS_SECONDS (default 60).
 */

import { readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import type { OutboxTables } from "@outbox/client";
import { startEmbeddedPostgres } from "@outbox/devstack";
import { createLogger } from "@outbox/shared";
import { type CompiledQuery, Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { createConsoleServer } from "../../apps/console/src/server.js";
import { freshDatabase } from "../src/fixtures.js";
import { percentile } from "../src/measure.js";

const PENDING = (process.env.BENCH_PENDING ?? "1000000,4000000").split(",").map(Number);
const TABS_SECONDS = Number(process.env.BENCH_TABS_SECONDS ?? 60);
const TABS = 10;
const REFRESH_SECONDS = 5;
const VIEWS = ["/", "/blocked-keys", "/dead-rows", "/replays"] as const;
const ROUNDS = 3;

const server = await startEmbeddedPostgres({
  onLog: (line) => {
    if (/ERROR|FATAL|PANIC|HINT/.test(String(line))) process.stderr.write(`postgres: ${line}\n`);
  },
});
const { url, handle } = await freshDatabase(server.adminUrl, "bench_console");
const pool = new pg.Pool({ connectionString: url, max: 8 });
const log = createLogger({ service: "bench", version: "0", level: "silent" });

/** A console of its own (nothing kept yet) on a database whose statements land in `sent`. */
async function startConsole(sent: CompiledQuery[]): Promise<{ base: string; close: () => Promise<void> }> {
  const db = new Kysely<OutboxTables>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === "query") sent.push(event.query);
    },
  });
  const console_ = createConsoleServer({
    db,
    desk: null,
    replays: null,
    log,
    assets: new Map(),
    credentials: { token: "", operators: [] },
    readOnly: true,
    claimCheckSendWithinHours: 0,
    refreshSeconds: REFRESH_SECONDS,
  });
  const port = await console_.listen("127.0.0.1", 0);
  return { base: `http://127.0.0.1:${port}`, close: () => console_.close() };
}

/** Planning + execution time of `query`, ms, as EXPLAIN ANALYZE measures it inside Postgres. */
async function databaseMs(query: CompiledQuery): Promise<number> {
  const { rows } = await pool.query<{
    "QUERY PLAN": [{ "Planning Time": number; "Execution Time": number }];
  }>(`EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ${query.sql}`, [...query.parameters]);
  const plan = rows[0]?.["QUERY PLAN"][0];
  return (plan?.["Planning Time"] ?? 0) + (plan?.["Execution Time"] ?? 0);
}

/** Each view's database time, the median of ROUNDS reads afresh. */
async function viewCosts(): Promise<Record<string, { ms: number; statements: number }>> {
  const costs: Record<string, { ms: number; statements: number }> = {};
  for (const view of VIEWS) {
    const rounds: number[] = [];
    let statements = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const sent: CompiledQuery[] = [];
      const console_ = await startConsole(sent);
      const answer = await fetch(new URL(view, console_.base));
      if (!answer.ok) throw new Error(`${view} answered ${answer.status}`);
      await answer.text();
      await console_.close();
      let ms = 0;
      for (const query of sent) ms += await databaseMs(query);
      rounds.push(ms);
      statements = sent.length;
    }
    costs[view] = {
      ms: percentile(
        [...rounds].sort((a, b) => a - b),
        50,
      ),
      statements,
    };
  }
  return costs;
}

/** CPU seconds (user + system) Postgres's processes used so far: the server, its live backends, the ended ones. */
async function postgresCpuSeconds(): Promise<number> {
  const { rows } = await pool.query<{ dir: string }>("SELECT current_setting('data_directory') AS dir");
  const postmaster = Number(readFileSync(`${rows[0]?.dir}/postmaster.pid`, "utf8").split("\n")[0]);
  const ticks = 100; // USER_HZ on Linux
  let total = 0;
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = await readFile(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // ended meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const [ppid, utime, stime, cutime, cstime] = [1, 11, 12, 13, 14].map((at) => Number(fields[at]));
    if (Number(entry) === postmaster) total += (utime ?? 0) + (stime ?? 0) + (cutime ?? 0) + (cstime ?? 0);
    else if (ppid === postmaster) total += (utime ?? 0) + (stime ?? 0);
  }
  return total / ticks;
}

/** TABS tabs over the views, each refreshing as the page does, for TABS_SECONDS: Postgres's cores used. */
async function tabsLoad(): Promise<{ cores: number; requests: number; failed: number }> {
  const console_ = await startConsole([]);
  let requests = 0;
  let failed = 0;
  const end = performance.now() + TABS_SECONDS * 1_000;
  const before = await postgresCpuSeconds();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: TABS }, async (_, tab) => {
      const view = VIEWS[tab % VIEWS.length] ?? "/";
      // Opened one after another, as a person does.
      await new Promise((resolve) => setTimeout(resolve, tab * 300));
      while (performance.now() < end) {
        requests += 1;
        const answer = await fetch(new URL(view, console_.base), { headers: { "x-console-refresh": "1" } });
        if (!answer.ok) failed += 1;
        await answer.text();
        await new Promise((resolve) => setTimeout(resolve, REFRESH_SECONDS * 1_000));
      }
    }),
  );
  const cpu = (await postgresCpuSeconds()) - before;
  const elapsed = (performance.now() - started) / 1_000;
  await console_.close();
  return { cores: cpu / elapsed, requests, failed };
}

async function seed(pending: number, from: number): Promise<void> {
  // Pending rows over 5 topics; a third with an ordering key (2 000 keys: the key-order trigger locks each key of a statement), as a backlog of orders.
  for (let at = from; at < pending; at += 500_000) {
    const upTo = Math.min(pending, at + 500_000);
    await pool.query(`
      INSERT INTO outbox (id, topic, ordering_key, event_type, payload, created_at, available_at)
      SELECT gen_random_uuid(), 'topic-' || (n % 5), CASE WHEN n % 3 = 0 THEN 'key-' || (n % 2000) END,
             'order.placed', json_build_object('n', n), now() - interval '1 hour', now() - interval '1 hour'
      FROM generate_series(${at + 1}, ${upTo}) AS n
    `);
    process.stderr.write(`  ${upTo} pending\n`);
  }
  await pool.query("VACUUM ANALYZE outbox");
}

try {
  process.stderr.write("seeding the history, dead rows, inbox and a republish run…\n");
  await pool.query(`
    INSERT INTO outbox (id, topic, event_type, payload, created_at, available_at, published_at)
    SELECT gen_random_uuid(), 'topic-' || (n % 5), 'order.placed', json_build_object('n', n),
           now() - (n * interval '270 milliseconds'), now() - (n * interval '270 milliseconds'),
           now() - (n * interval '270 milliseconds') + interval '40 milliseconds'
    FROM generate_series(1, 950000) AS n
  `);
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
  // A run over the last two days of history, a third of the way through.
  await pool.query(`
    INSERT INTO relay_republish (id, from_published, to_published, rate, cursor_published, cursor_seq, sent)
    SELECT gen_random_uuid(), now() - interval '2 days', now(), 500, published_at, seq, 200000
    FROM outbox WHERE published_at > now() - interval '2 days' ORDER BY published_at LIMIT 1 OFFSET 200000
  `);
  await pool.query("VACUUM ANALYZE inbox");
  let seeded = 0;
  const rows: string[] = [];
  for (const pending of PENDING) {
    await seed(pending, seeded);
    seeded = pending;
    // The run moves between the readings: its cursor a batch further.
    await pool.query(`
      UPDATE relay_republish r SET sent = r.sent + 1000, cursor_published = o.published_at, cursor_seq = o.seq
      FROM (SELECT published_at, seq FROM outbox WHERE published_at > now() - interval '2 days'
            ORDER BY published_at LIMIT 1 OFFSET ${200_000 + rows.length * 1_000}) o
    `);
    const costs = await viewCosts();
    process.stderr.write(`  ${TABS} tabs for ${TABS_SECONDS} s…\n`);
    const tabs = await tabsLoad();
    for (const [view, cost] of Object.entries(costs)) {
      rows.push(`| ${pending.toLocaleString("en")} | ${view} | ${cost.ms.toFixed(1)} | ${cost.statements} |`);
    }
    rows.push(
      `| ${pending.toLocaleString("en")} | ${TABS} tabs, ${TABS_SECONDS} s | ${tabs.cores.toFixed(3)} cores | ${tabs.requests} requests, ${tabs.failed} failed |`,
    );
    process.stdout.write(`${rows.slice(-VIEWS.length - 1).join("\n")}\n`);
  }
  process.stdout.write(
    "\n| pending rows | view | database ms (median) | statements |\n| ---: | --- | ---: | ---: |\n",
  );
  process.stdout.write(`${rows.join("\n")}\n`);
} finally {
  await pool.end();
  await handle.close(5_000);
  await server.stop();
}
