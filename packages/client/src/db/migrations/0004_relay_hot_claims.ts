import { type Kysely, sql } from "kysely";

/**
 * Cheaper claims and marks for the relay.
 *
 * - The pending indexes lose their INCLUDE columns. `locked_until` changes on every claim, and an
 *   update that changes an indexed column (INCLUDE counts) can never be HOT: each claim inserted a new
 *   entry into every index of the table, and each such entry was one more dead item for the next claim
 *   to walk past. Without them a claim touches no index when the row's page has room. The claim reads
 *   `available_at`/`locked_until` from the heap page it must visit (and lock) anyway.
 * - Narrower, `outbox_pending_by_seq` is also no longer costlier to the planner than the full unique
 *   index on `seq`, which it used to lose to right after an ANALYZE that saw the whole backlog pending —
 *   and that index walks every published row before the first pending one.
 * - `fillfactor` leaves room on each page for the claim's new row version (a HOT update must stay on
 *   its page); it applies to pages filled from now on.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE outbox SET (fillfactor = 70)`.execute(db);
  await sql`DROP INDEX outbox_pending_by_seq`.execute(db);
  await sql`
    CREATE INDEX outbox_pending_by_seq ON outbox (seq) WHERE published_at IS NULL AND dead_at IS NULL
  `.execute(db);
  await sql`DROP INDEX outbox_pending_by_key`.execute(db);
  await sql`
    CREATE INDEX outbox_pending_by_key ON outbox (ordering_key, seq)
      WHERE published_at IS NULL AND dead_at IS NULL AND ordering_key IS NOT NULL
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX outbox_pending_by_key`.execute(db);
  await sql`
    CREATE INDEX outbox_pending_by_key ON outbox (ordering_key, seq)
      INCLUDE (available_at, locked_until)
      WHERE published_at IS NULL AND dead_at IS NULL AND ordering_key IS NOT NULL
  `.execute(db);
  await sql`DROP INDEX outbox_pending_by_seq`.execute(db);
  await sql`
    CREATE INDEX outbox_pending_by_seq ON outbox (seq)
      INCLUDE (available_at, locked_until, ordering_key)
      WHERE published_at IS NULL AND dead_at IS NULL
  `.execute(db);
  await sql`ALTER TABLE outbox RESET (fillfactor)`.execute(db);
}
