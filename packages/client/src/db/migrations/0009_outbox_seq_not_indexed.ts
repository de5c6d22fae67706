import { type Kysely, sql } from "kysely";

// `seq` had a unique index of its own since 0001. Nothing looks a row up by seq outside the two
// partial indexes that carry it (`outbox_pending_by_seq`, `outbox_pending_by_key`), and an identity
// column GENERATED ALWAYS is unique without one. The index was paid for twice per event: once by the
// enqueueing transaction, once by the relay's mark (setting `published_at` changes a partial index's
// predicate, so the update is never HOT and every index gets a new entry).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE outbox DROP CONSTRAINT outbox_seq_key`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE outbox ADD CONSTRAINT outbox_seq_key UNIQUE (seq)`.execute(db);
}
