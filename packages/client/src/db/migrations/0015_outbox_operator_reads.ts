import { type Kysely, sql } from "kysely";

/**
 * The dead rows, for `relay status` and the operator console (apps/console), served by an index as
 * small as what they count, not by a scan of the whole outbox (nearly all of which is published
 * history).
 *
 * - `outbox_dead`: the dead rows (skipped ones included, which `outbox_dead_heads` leaves out), by
 *   when they died: `relay status`'s dead count per topic, the console's list of dead rows and its
 *   groups by reason. Dead rows are few, and a row gets its entry only when it dies: an insert and a
 *   claim write nothing into it. (An index of every unsent row by topic was tried first: on a table
 *   whose pending index was bloated the planner took it for the relay's claim, sorting every unsent
 *   row by seq per claim; the pending rows are counted on `outbox_pending_by_seq` instead.)
 *   `CREATE INDEX` scans the table while blocking inserts: apply it in a quiet moment on a large outbox.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX outbox_dead ON outbox (dead_at) WHERE dead_at IS NOT NULL AND published_at IS NULL
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX outbox_dead`.execute(db);
}
