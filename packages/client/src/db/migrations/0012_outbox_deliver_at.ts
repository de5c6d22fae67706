import { type Kysely, sql } from "kysely";

/**
 * Delayed and scheduled events (`enqueue`'s `deliverAt` / `delayMs`).
 *
 * - `deliver_at`: the due time the caller asked for, NULL for "at once". `enqueue` writes the same time
 *   into `available_at`, which is all the claim looks at, so a delayed row is claimed no earlier than
 *   that and, as a key's head, holds its key back like a row in backoff (outbox-store.ts). The column
 *   keeps the asked time after `available_at` has moved on (a retry's backoff): the lag counts from it,
 *   not from `created_at` (an event due in an hour is not an hour late), and `relay status` tells
 *   scheduled rows from rows in backoff by it. Nullable without a default, so adding it rewrites nothing.
 * - `outbox_scheduled`: "when is the next scheduled row due?" — what a relay asks before it sleeps, so
 *   its timer follows the earliest due row — is one probe here instead of a walk of every pending row,
 *   and `relay status` counts the scheduled rows from it. Partial on `deliver_at IS NOT NULL`: an event
 *   enqueued without a delay (nearly all of them) writes no entry into it. A claim changes none of its
 *   columns (`locked_until`, `locked_by`), so claims stay HOT updates; marking published already
 *   writes index entries (`published_at` is in every pending index's predicate).
 *   `CREATE INDEX` scans the table while blocking inserts: apply it in a quiet moment on a large outbox.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE outbox ADD COLUMN deliver_at timestamptz`.execute(db);
  await sql`
    CREATE INDEX outbox_scheduled ON outbox (deliver_at)
      WHERE deliver_at IS NOT NULL AND published_at IS NULL AND dead_at IS NULL
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX outbox_scheduled`.execute(db);
  await sql`ALTER TABLE outbox DROP COLUMN deliver_at`.execute(db);
}
