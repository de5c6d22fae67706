/**
 * What the outbox row adds to POST /photos inside Postgres, piece by piece: the api's statement (photo
 * + gear link + outbox event) beside the comparison's (photo + gear link), and the api's statement
 * into copies of the outbox that each lack one piece (a trigger, both, an index, every index). Each statement
 * runs N times in a server-side loop, so neither the client, the protocol nor the commit is counted:
 * only executing the statement. Rounds alternate the order; each variant's figure is its median
 * difference from the comparison in the same round, which cancels this machine's drift.
 *
 *   pnpm exec tsx --conditions=development bench/tools/outbox-row-cost.ts
 *
 * BENCH_ROUNDS (default 14), BENCH_STATEMENTS per round and variant (default 2 000).
 */

import { migrateApiTables } from "@outbox/api";
import { startEmbeddedPostgres } from "@outbox/devstack";
import { sql } from "kysely";
import { freshDatabase } from "../src/fixtures.js";
import { percentile } from "../src/measure.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 14);
const STATEMENTS = Number(process.env.BENCH_STATEMENTS ?? 2_000);

/** Copies of the outbox (columns, defaults, identity, indexes; `LIKE` copies no trigger), less one piece. */
const PROBES = [
  "CREATE TABLE probe_no_trigger (LIKE outbox INCLUDING ALL)",
  "CREATE TABLE probe_no_key_index (LIKE outbox INCLUDING ALL)",
  "DROP INDEX probe_no_key_index_ordering_key_seq_idx",
  "CREATE TABLE probe_no_seq_index (LIKE outbox INCLUDING ALL)",
  "DROP INDEX probe_no_seq_index_seq_idx",
  "CREATE TABLE probe_no_primary_key (LIKE outbox INCLUDING ALL)",
  "ALTER TABLE probe_no_primary_key DROP CONSTRAINT probe_no_primary_key_pkey",
  "CREATE TABLE probe_heap_only (LIKE outbox INCLUDING DEFAULTS INCLUDING IDENTITY)",
  // The outbox before migration 0014: the wake-up trigger, not the key-order one.
  "CREATE TABLE probe_no_key_turn (LIKE outbox INCLUDING ALL)",
  `CREATE TRIGGER probe_no_key_turn_inserted AFTER INSERT ON probe_no_key_turn
     FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify_inserted()`,
];

const PAYLOAD = `'{"photoId":"0192d3c4-0000-7000-8000-000000000000","title":"bench photo","gearIds":[]}'`;
/** The api's statement for a photo without gear, writing its event into `table`. */
const withEvent = (table: string) =>
  `WITH photo AS (INSERT INTO photos (id, title) VALUES (id, 'bench photo')),
     link AS (INSERT INTO photo_gear_links (photo_id, gear_ids, state) VALUES (id, '[]', 'linked'))
   INSERT INTO ${table} (id, topic, event_type, ordering_key, payload, headers)
   VALUES (gen_random_uuid(), 'photos', 'photo.posted', id::text, ${PAYLOAD}, '{}')`;

const VARIANTS: Record<string, string> = {
  "without the event (the comparison)": `WITH photo AS (INSERT INTO photos (id, title) VALUES (id, 'bench photo'))
     INSERT INTO photo_gear_links (photo_id, gear_ids, state) VALUES (id, '[]', 'linked')`,
  "with the event (ours)": withEvent("outbox"),
  "outbox without its key-order trigger (0014)": withEvent("probe_no_key_turn"),
  "outbox without its triggers": withEvent("probe_no_trigger"),
  "no trigger, no outbox_pending_by_key": withEvent("probe_no_key_index"),
  "no trigger, no outbox_pending_by_seq": withEvent("probe_no_seq_index"),
  "no trigger, no primary key": withEvent("probe_no_primary_key"),
  "no trigger, no index at all": withEvent("probe_heap_only"),
};
const BASELINE = "without the event (the comparison)";

const server = await startEmbeddedPostgres();
const { handle } = await freshDatabase(server.adminUrl, "bench_row_cost");
await migrateApiTables(handle.db);
try {
  for (const statement of PROBES) await sql.raw(statement).execute(handle.db);
  process.stderr.write(`${ROUNDS} rounds of ${STATEMENTS} statements per variant…\n`);
  const names = Object.keys(VARIANTS);
  const perStatementUs: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const started = performance.now();
      await sql
        .raw(`DO $$ DECLARE id uuid; BEGIN
                FOR i IN 1..${STATEMENTS} LOOP id := gen_random_uuid(); ${VARIANTS[name]}; END LOOP;
              END $$`)
        .execute(handle.db);
      perStatementUs[name]?.push(((performance.now() - started) * 1_000) / STATEMENTS);
    }
    process.stderr.write(`  round ${round + 1} of ${ROUNDS}\n`);
  }
  const median = (values: readonly number[]) =>
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    );
  const baseline = perStatementUs[BASELINE] ?? [];
  process.stdout.write("\n| statement | µs per statement | more than the comparison, µs (paired median) |\n");
  process.stdout.write("| --- | ---: | ---: |\n");
  for (const name of names) {
    const figures = perStatementUs[name] ?? [];
    const extra = median(figures.map((figure, round) => figure - (baseline[round] ?? figure)));
    process.stdout.write(`| ${name} | ${median(figures).toFixed(1)} | ${extra.toFixed(1)} |\n`);
  }
} finally {
  await handle.close(5_000);
  await server.stop();
}
