import { type Kysely, sql } from "kysely";

// POST /photos under an Idempotency-Key (apps/api): the key is stored with the photo it created, so
// a retried request finds the photo instead of writing a second one and a second event. UNIQUE is
// what makes concurrent repeats safe: the second INSERT waits for the first's transaction and then
// fails, it never writes. `idempotency_response` is the body the first request answered, replayed to
// its repeats (NULL while that request is still linking the gear, and for photos posted without a key).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE photos
      ADD COLUMN idempotency_key text,
      ADD COLUMN idempotency_response jsonb,
      ADD CONSTRAINT photos_idempotency_key UNIQUE (idempotency_key)
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE photos
      DROP CONSTRAINT photos_idempotency_key,
      DROP COLUMN idempotency_response,
      DROP COLUMN idempotency_key
  `.execute(db);
}
