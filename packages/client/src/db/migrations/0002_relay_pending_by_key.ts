import { type Kysely, sql } from "kysely";

/**
 * The relay's claim asks, per ordering key, "which is the oldest pending row of this key?". Without
 * this index that is a walk of every pending row; with it, one probe per key.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX outbox_pending_by_key ON outbox (ordering_key, seq)
      INCLUDE (available_at, locked_until)
      WHERE published_at IS NULL AND dead_at IS NULL AND ordering_key IS NOT NULL
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX outbox_pending_by_key`.execute(db);
}
