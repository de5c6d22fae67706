/**
 * The history the growth scenario grows: published outbox rows and processed inbox rows, written
 * server-side (INSERT … SELECT generate_series) into the tables our migrations create, spread over
 * HISTORY_DAYS days as a relay and a consumer keeping that much history would leave them.
 */
import type { DatabaseHandle } from "@outbox/shared";
import { sql } from "kysely";
import { BODY, KEYS, TRACEPARENT } from "./fixtures.js";

/** Days of history kept; "a day of history" is the oldest 1 / HISTORY_DAYS of the rows. */
export const HISTORY_DAYS = 5;

/** Rows per INSERT: each statement stays well inside the set-up pool's 300 s statement timeout. */
const FILL_CHUNK = 250_000;

/**
 * Fills an empty outbox with `rows` published rows. Each looks like a bench event the relay published:
 * same payload size, one of KEYS ordering keys, a UUIDv7 id, and created/published times spread evenly
 * over HISTORY_DAYS days ending an hour ago, oldest first. Written in time order, as a relay's
 * history is: a day of it lies in one stretch of the heap and of `outbox_published_at`, which is what
 * retention's cost depends on (a fill in random time order would scatter every day over the whole
 * table). The hour keeps the rows a run drains apart from it. Progress goes to `log`.
 */
export async function fillPublishedHistory(
  handle: DatabaseHandle,
  rows: number,
  log: (message: string) => void,
): Promise<void> {
  for (let at = 0; at < rows; at += FILL_CHUNK) {
    const count = Math.min(FILL_CHUNK, rows - at);
    // `at` is computed once per row in the inner SELECT so created_at, published_at and the id's
    // timestamp agree; uuidv7(shift) dates the id like enqueue's UUIDv7 of that moment.
    await sql`
      INSERT INTO outbox (id, topic, ordering_key, event_type, payload, headers, created_at, available_at,
                          published_at)
      SELECT uuidv7(g.at - now()), 'bench', 'key-' || (g.n % ${KEYS}), 'bench.happened',
             json_build_object('n', g.n, 'body', ${BODY}::text),
             jsonb_build_object('traceparent', ${TRACEPARENT}::text),
             g.at, g.at, g.at + interval '20 milliseconds'
      FROM (
        SELECT n, ${spreadOverDays(rows)} AS at
        FROM generate_series(${at}::bigint, ${at + count - 1}::bigint) AS n
      ) g
    `.execute(handle.db);
    log(`    outbox history: ${at + count} / ${rows} published rows`);
  }
}

/** Row `n` of `rows`' time: oldest first, HISTORY_DAYS days evenly, the newest an hour ago. */
function spreadOverDays(rows: number) {
  return sql`now() - interval '1 hour' - ((${rows}::float8 - n) / ${rows}) * ${HISTORY_DAYS} * interval '1 day'`;
}

/** Processed inbox rows of `consumer`. */
async function inboxRows(handle: DatabaseHandle, consumer: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT count(*) AS n FROM inbox WHERE consumer = ${consumer}
  `.execute(handle.db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Adds processed inbox rows of `consumer` until it holds `target`: random event ids (as the bench's
 * messages carry), processed over HISTORY_DAYS days ending an hour ago in time order (see
 * fillPublishedHistory), then VACUUM ANALYZE inbox.
 * Under the consumer's own name: the primary key (consumer, event_id) only grows for a consumer
 * that inserts among its own rows.
 */
export async function fillInboxHistory(
  handle: DatabaseHandle,
  consumer: string,
  target: number,
  log: (message: string) => void,
): Promise<void> {
  const start = await inboxRows(handle, consumer);
  for (let at = start; at < target; at += FILL_CHUNK) {
    const count = Math.min(FILL_CHUNK, target - at);
    await sql`
      INSERT INTO inbox (consumer, event_id, message_id, received_at, processed_at)
      SELECT ${consumer}, gen_random_uuid(), gen_random_uuid()::text, g.at, g.at + interval '5 milliseconds'
      FROM (
        SELECT ${spreadOverDays(target)} AS at
        FROM generate_series(${at}::bigint, ${at + count - 1}::bigint) AS n
      ) g
    `.execute(handle.db);
    log(`    inbox history: ${at + count} / ${target} rows`);
  }
  // Plans as a long-lived inbox gets them: statistics and a visibility map for the rows just written.
  await sql`VACUUM ANALYZE inbox`.execute(handle.db);
  await writeOutDirtyPages(handle);
}

/**
 * CHECKPOINT: the pages a fill or a VACUUM dirtied are written now. Left to the checkpointer, they
 * were written during the next measured run, whose Postgres CPU then counted the fill's write-out
 * (a quick run's consumer showed 6× the Postgres CPU per message right after a 500 000-row fill).
 */
export async function writeOutDirtyPages(handle: DatabaseHandle): Promise<void> {
  await sql`CHECKPOINT`.execute(handle.db);
}

/**
 * The age, in ms, just under the `rows`-th oldest published row's: a retention with this max age
 * deletes about the oldest `rows` rows (a day of history when `rows` is 1 / HISTORY_DAYS of them).
 */
export async function ageOfOldest(handle: DatabaseHandle, rows: number): Promise<number> {
  const { rows: found } = await sql<{ ms: number }>`
    SELECT (extract(epoch FROM now() - published_at) * 1000)::float8 AS ms
    FROM outbox WHERE published_at IS NOT NULL
    ORDER BY published_at
    OFFSET ${Math.max(0, rows - 1)} LIMIT 1
  `.execute(handle.db);
  const ms = found[0]?.ms;
  if (ms === undefined) throw new Error(`fewer than ${rows} published rows`);
  return Math.floor(ms);
}

/** The database's clock: what `publishedSince` compares with. */
export async function databaseNow(handle: DatabaseHandle): Promise<Date> {
  const { rows } = await sql<{ now: Date }>`SELECT now() AS now`.execute(handle.db);
  return rows[0]?.now ?? new Date();
}

/**
 * Deletes the rows a run's relay published since `since`, so the next run starts from the history
 * the step measures rather than from it plus every earlier run's backlog. History is at least an
 * hour old: the range holds only drained rows.
 */
export async function deletePublishedSince(handle: DatabaseHandle, since: Date): Promise<void> {
  await sql`DELETE FROM outbox WHERE published_at >= ${since}`.execute(handle.db);
}

/** Published rows older than `since`: the history, without the rows drained since. */
export async function historyRows(handle: DatabaseHandle, since: Date): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT count(*) AS n FROM outbox WHERE published_at < ${since}
  `.execute(handle.db);
  return Number(rows[0]?.n ?? 0);
}
