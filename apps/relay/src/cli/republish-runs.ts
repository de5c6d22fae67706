import type { OutboxTables as Database } from "@outbox/client";
import { type Kysely, sql } from "kysely";
import { type ClaimedRow, claimedRow, type RawOutboxRow } from "../outbox-store.js";

/** Where a run got to: every row of its range up to here, in (published_at, seq) order, was sent. */
export interface RepublishCursor {
  /** Postgres's own text of the timestamp: a JS Date would drop its microseconds. */
  readonly published: string;
  readonly seq: string;
}

/** One `relay republish` run, as `relay_republish` keeps it (migration 0013). */
export interface RepublishRun {
  readonly id: string;
  /** The range: rows published at or after `from`, before `to` (timestamps as Postgres prints them). */
  readonly from: string;
  readonly to: string;
  readonly topic: string | null;
  readonly orderingKey: string | null;
  readonly rate: number;
  readonly cursor: RepublishCursor | null;
  readonly sent: number;
  readonly skipped: number;
  readonly finished: boolean;
}

interface RunRow {
  id: string;
  from_published: string;
  to_published: string;
  topic: string | null;
  ordering_key: string | null;
  rate: number;
  cursor_published: string | null;
  cursor_seq: string | null;
  sent: string;
  skipped: string;
  finished: boolean;
}

const RUN_COLUMNS = sql`
  id, from_published::text AS from_published, to_published::text AS to_published, topic, ordering_key,
  rate, cursor_published::text AS cursor_published, cursor_seq::text AS cursor_seq, sent::text AS sent,
  skipped::text AS skipped, finished_at IS NOT NULL AS finished
`;

function runOf(row: RunRow): RepublishRun {
  return {
    id: row.id,
    from: row.from_published,
    to: row.to_published,
    topic: row.topic,
    orderingKey: row.ordering_key,
    rate: row.rate,
    cursor:
      row.cursor_published === null || row.cursor_seq === null
        ? null
        : { published: row.cursor_published, seq: row.cursor_seq },
    sent: Number(row.sent),
    skipped: Number(row.skipped),
    finished: row.finished,
  };
}

export interface NewRun {
  readonly id: string;
  /** ISO 8601 with its zone, handed to Postgres as text: no precision lost on the way. */
  readonly from: string;
  /** Absent: the range ends when the run starts (`now()`), fixed from then on. */
  readonly to: string | undefined;
  readonly topic: string | undefined;
  readonly orderingKey: string | undefined;
  readonly rate: number;
}

/** Records a new run, its range fixed from now on. */
export async function createRun(db: Kysely<Database>, run: NewRun): Promise<RepublishRun> {
  const { rows } = await sql<RunRow>`
    INSERT INTO relay_republish (id, from_published, to_published, topic, ordering_key, rate)
    VALUES (${run.id}::uuid, ${run.from}::timestamptz, COALESCE(${run.to ?? null}::timestamptz, now()),
            ${run.topic ?? null}, ${run.orderingKey ?? null}, ${run.rate})
    RETURNING ${RUN_COLUMNS}
  `.execute(db);
  return runOf(rows[0] as RunRow);
}

/** The run `id`; undefined when there is none. `rate`, when given, replaces the one it was started with. */
export async function resumeRun(
  db: Kysely<Database>,
  id: string,
  rate: number | undefined,
): Promise<RepublishRun | undefined> {
  const { rows } = await sql<RunRow>`
    UPDATE relay_republish SET rate = COALESCE(${rate ?? null}::integer, rate), updated_at = now()
    WHERE id = ${id}::uuid
    RETURNING ${RUN_COLUMNS}
  `.execute(db);
  return rows[0] === undefined ? undefined : runOf(rows[0]);
}

/** A published row of a run's range, and where it is in the walk. */
export interface RangeRow {
  readonly row: ClaimedRow;
  readonly cursor: RepublishCursor;
}

interface RawRangeRow extends RawOutboxRow {
  published_at: string;
}

/** What a run covers: a range of publish times, and its optional filters (a new run's `to` may be open). */
type RangeOf = Pick<RepublishRun, "from" | "topic" | "orderingKey"> & { readonly to: string | undefined };

/** The rows of `range` after `cursor`: the WHERE both the walk and the reapply check read. */
function inRange(range: RangeOf, cursor: RepublishCursor | null) {
  const after =
    cursor === null
      ? sql``
      : sql`AND o.published_at >= ${cursor.published}::timestamptz
            AND (o.published_at, o.seq) > (${cursor.published}::timestamptz, ${cursor.seq}::bigint)`;
  return sql`o.published_at IS NOT NULL
      AND o.published_at >= ${range.from}::timestamptz
      AND o.published_at < COALESCE(${range.to ?? null}::timestamptz, now())
      ${after}
      ${range.topic === null ? sql`` : sql`AND o.topic = ${range.topic}`}
      ${range.orderingKey === null ? sql`` : sql`AND o.ordering_key = ${range.orderingKey}`}`;
}

/**
 * The next `limit` rows of the run's range after `cursor`, in (published_at, seq) order. Reads
 * published rows only and locks nothing: the live relay's claims never wait on it, and no row it
 * could still claim (unpublished) is ever in a range.
 *
 * - The range and the cursor both bound `published_at`, so the walk is a range scan of the partial
 *   index `outbox_published_at` (seq has no index since 0009); the row comparison then breaks the ties
 *   of one mark statement's shared `now()` by seq, which keeps each key's order.
 * - `payload::text` is the stored JSON text as enqueued, the message the live relay sent (outbox-store.ts).
 */
export async function readRange(
  db: Kysely<Database>,
  run: RepublishRun,
  cursor: RepublishCursor | null,
  limit: number,
): Promise<RangeRow[]> {
  const { rows } = await sql<RawRangeRow>`
    SELECT o.id, o.seq::text AS seq, o.topic, o.ordering_key, o.event_type, o.payload::text AS payload,
           o.headers, o.attempts, o.created_at, o.published_at::text AS published_at
    FROM outbox o
    WHERE ${inRange(run, cursor)}
    -- Qualified: bare, ORDER BY would take the output columns, the text forms (seq "10" before "9").
    ORDER BY o.published_at, o.seq
    LIMIT ${limit}
  `.execute(db);
  return rows.map((raw) => ({
    row: claimedRow(raw),
    cursor: { published: raw.published_at, seq: raw.seq },
  }));
}

/**
 * When the oldest row still to send in `range` was published, if that is more than `hours` ago (by
 * the database's clock, the one `published_at` was written with); undefined when no such row. A
 * consumer deletes an inbox row CONSUMER_INBOX_RETENTION_HOURS after processing its event, which was
 * after its publish: a row published less than that ago still has its inbox row everywhere, and its
 * replay is a duplicate. `min` over the range is one probe of `outbox_published_at`.
 */
export async function oldestBeyond(
  db: Kysely<Database>,
  range: RangeOf,
  cursor: RepublishCursor | null,
  hours: number,
): Promise<string | undefined> {
  const { rows } = await sql<{ oldest: string | null }>`
    SELECT min(o.published_at)::text AS oldest
    FROM outbox o
    WHERE ${inRange(range, cursor)}
      AND o.published_at < now() - ${hours} * interval '1 hour'
  `.execute(db);
  return rows[0]?.oldest ?? undefined;
}

/** Where the run's lock lives: its connection's session, or (behind a transaction pooler) each transaction. */
export type LockHeld = "session" | "per-transaction";

/**
 * Takes run `id` for this connection, or says it is taken: false when another process works it. A
 * session-level advisory lock, held for the whole run (republish works on one connection), let go
 * by unlockRun when the run ends and by Postgres when the connection closes, so a killed run never
 * leaves its run locked. Its two-int key space does not overlap the single-bigint one (the docs say so), and the
 * first key names the table, so no other lock of ours shares it.
 *
 * Behind a transaction pooler a session lock would stay with whichever server connection took it,
 * held after the run by nobody: `per-transaction` only tries the transaction-scoped lock, which
 * says whether a run on a session holds it now and leaves nothing held. A second run past it is
 * stopped by the cursor, which only moves forward (advanceRun).
 */
export async function lockRun(
  db: Kysely<Database>,
  id: string,
  held: LockHeld = "session",
): Promise<boolean> {
  const { rows } =
    held === "session"
      ? await sql<{ locked: boolean }>`
          SELECT pg_try_advisory_lock(hashtext('relay_republish'), hashtext(${id}::uuid::text)) AS locked
        `.execute(db)
      : await sql<{ locked: boolean }>`
          SELECT pg_try_advisory_xact_lock(hashtext('relay_republish'), hashtext(${id}::uuid::text)) AS locked
        `.execute(db);
  return rows[0]?.locked === true;
}

/**
 * Lets go of run `id`'s lock (lockRun) on this connection. A connection already broken holds
 * nothing any more (Postgres let the lock go with it): that failure is not the run's outcome.
 */
export async function unlockRun(db: Kysely<Database>, id: string): Promise<void> {
  await sql`
    SELECT pg_advisory_unlock(hashtext('relay_republish'), hashtext(${id}::uuid::text))
  `
    .execute(db)
    .catch(() => {});
}

/**
 * Moves the run's cursor past rows sent (or skipped as unsendable), with their counts, in one
 * statement. Forward only: the lock keeps a second process off the run, and should one get past it
 * (a lock lost with its connection), its older cursor changes nothing and it stops, with this error.
 */
export async function advanceRun(
  db: Kysely<Database>,
  id: string,
  cursor: RepublishCursor,
  counts: { readonly sent: number; readonly skipped: number },
): Promise<void> {
  const result = await sql`
    UPDATE relay_republish
    SET cursor_published = ${cursor.published}::timestamptz, cursor_seq = ${cursor.seq}::bigint,
        sent = sent + ${counts.sent}, skipped = skipped + ${counts.skipped}, updated_at = now()
    WHERE id = ${id}::uuid
      AND (cursor_published IS NULL
           OR (cursor_published, cursor_seq) < (${cursor.published}::timestamptz, ${cursor.seq}::bigint))
  `.execute(db);
  if (Number(result.numAffectedRows ?? 0) === 0) {
    throw new Error(`run ${id}: its cursor is already past this page: another process is working it`);
  }
}

export async function finishRun(db: Kysely<Database>, id: string): Promise<void> {
  await sql`UPDATE relay_republish SET finished_at = now(), updated_at = now() WHERE id = ${id}::uuid`.execute(
    db,
  );
}

/** The latest `limit` runs, newest first (their ids are UUIDv7: time-ordered). */
export async function listRuns(db: Kysely<Database>, limit: number): Promise<RepublishRun[]> {
  const { rows } = await sql<RunRow>`
    SELECT ${RUN_COLUMNS} FROM relay_republish ORDER BY started_at DESC, id DESC LIMIT ${limit}
  `.execute(db);
  return rows.map(runOf);
}

/** The run `id` as recorded; undefined when there is none. */
export async function readRun(db: Kysely<Database>, id: string): Promise<RepublishRun | undefined> {
  const { rows } = await sql<RunRow>`
    SELECT ${RUN_COLUMNS} FROM relay_republish WHERE id = ${id}::uuid
  `.execute(db);
  return rows[0] === undefined ? undefined : runOf(rows[0]);
}

/**
 * How many rows of the run's range it has still to send (after its cursor): a range count on
 * `outbox_published_at`, the walk's own WHERE. 0 once it finished. With `cap`, the count stops
 * after `cap + 1` rows (a range of millions costs as many index entries): more than `cap` left
 * answers `cap + 1`.
 */
export async function rowsLeft(
  db: Kysely<Database>,
  run: RepublishRun,
  cap = Number.POSITIVE_INFINITY,
): Promise<number> {
  if (run.finished) return 0;
  const { rows } = Number.isFinite(cap)
    ? await sql<{ left: string }>`
        SELECT count(*) AS left FROM (SELECT 1 FROM outbox o WHERE ${inRange(run, run.cursor)} LIMIT ${cap + 1}) capped
      `.execute(db)
    : await sql<{ left: string }>`
        SELECT count(*) AS left FROM outbox o WHERE ${inRange(run, run.cursor)}
      `.execute(db);
  return Number(rows[0]?.left ?? 0);
}
