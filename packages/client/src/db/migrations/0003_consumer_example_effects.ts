import { type Kysely, sql } from "kysely";

// The example handler's effect table (apps/consumer/src/example-handlers.ts). Its primary key is the
// event id, so a second effect for one event would fail loudly instead of hiding a broken inbox.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE example_effects (
      event_id    uuid PRIMARY KEY,
      event_type  text NOT NULL,
      payload     jsonb NOT NULL,
      applied_at  timestamptz NOT NULL DEFAULT now()
    )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE example_effects`.execute(db);
}
