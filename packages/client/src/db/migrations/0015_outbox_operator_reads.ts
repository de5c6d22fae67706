import { type Kysely, sql } from "kysely";

/**
 * What `relay status` and the operator console (apps/console) read, served by indexes as small as
 * what they count, not by a scan of the whole outbox (nearly all of which is published history).
 *
 * - `outbox_unsent_by_topic`: every unsent row (pending or dead), with the columns the backlog per
 *   topic needs, so `relay status`'s count per topic (unsent, dead, blocked keys, the oldest unsent
 *   row's age) is an index-only scan. Its predicate, `published_at IS NULL`, is the status query's
 *   WHERE as written; no pending index has it alone (each also says `dead_at IS NULL`), so that query
 *   read the whole table. None of its columns is one a claim changes (`attempts`, `available_at`,
 *   `locked_until`, `locked_by`), so claims stay HOT updates; marking published or dead already writes
 *   index entries (`published_at` and `dead_at` are in every pending index's predicate). Every insert
 *   writes one entry into it, as into `outbox_pending_by_seq`.
 * - `outbox_dead`: the dead rows, newest death first, for the console's list of dead rows and its
 *   groups by reason; skipped rows included (`outbox_dead_heads` leaves them out). Dead rows are few.
 *   `CREATE INDEX` scans the table while blocking inserts: apply it in a quiet moment on a large outbox.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX outbox_unsent_by_topic ON outbox (topic)
      INCLUDE (created_at, deliver_at, dead_at, skipped_at, ordering_key)
      WHERE published_at IS NULL
  `.execute(db);
  await sql`
    CREATE INDEX outbox_dead ON outbox (dead_at) WHERE dead_at IS NOT NULL AND published_at IS NULL
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX outbox_dead`.execute(db);
  await sql`DROP INDEX outbox_unsent_by_topic`.execute(db);
}
