import { type Kysely, sql } from "kysely";

/**
 * `outbox.payload` becomes `json`, which stores the text it is given as it is, instead of `jsonb`,
 * which stores a parsed form and prints it back its own way (a space after every `:` and `,`, keys
 * sorted by length, duplicates dropped). The relay publishes `payload::text`, so with `jsonb` the SNS
 * message was neither what the caller wrote nor the size `enqueue` had checked: a payload accepted near
 * the 256 KiB limit could grow past it and die in the relay. With `json` the relay sends the caller's
 * bytes, the very bytes `enqueue` measured.
 *
 * Readers are unaffected: pg parses `json` like `jsonb`, and `->`/`->>` work on both. Nothing indexes
 * or compares the payload (`json` has no equality or GIN support).
 *
 * Rows already in the table keep jsonb's rendering (the cast prints them that way). The ALTER rewrites
 * the table and its indexes under an ACCESS EXCLUSIVE lock: on a large outbox, apply it in a quiet
 * moment (or after retention has trimmed the published history).
 *
 * `down` parses every payload back into `jsonb`; it fails on a payload `jsonb` refuses (`\u0000`, an
 * unpaired surrogate escape) and loses the verbatim text, as `jsonb` always did.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE outbox ALTER COLUMN payload TYPE json USING payload::json`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE outbox ALTER COLUMN payload TYPE jsonb USING payload::jsonb`.execute(db);
}
