import { type Kysely, sql } from "kysely";

// `example_effects` is the consumer demo's table (apps/consumer/src/example-handlers.ts), not the
// outbox's: it now comes from the demo's own migration set (`migrate --demo`, packages/shared/src/db/
// example-migrations.ts). 0003 stays in the list because applied migrations are never edited and
// kysely's Migrator refuses a list that lacks one it has applied; this drops what 0003 created.
// IF EXISTS: a demo database may have dropped it already.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS example_effects`.execute(db);
}

// Back to the schema 0003 left.
export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE example_effects (
      event_id    uuid PRIMARY KEY,
      event_type  text NOT NULL,
      payload     jsonb NOT NULL,
      applied_at  timestamptz NOT NULL DEFAULT now()
    )
  `.execute(db);
}
