import { type Kysely, sql } from "kysely";

// The photo service (apps/api). A photo and its gear link are written in the transaction that
// enqueues `photo.posted`; the link is confirmed with the equipment service only after the commit,
// so `photo_gear_links` keeps what is still to do for the reconciliation job.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE photos (
      id          uuid PRIMARY KEY,
      title       text NOT NULL,
      created_at  timestamptz NOT NULL DEFAULT now()
    )
  `.execute(db);
  await sql`
    CREATE TABLE photo_gear_links (
      photo_id         uuid PRIMARY KEY REFERENCES photos (id),
      gear_ids         jsonb NOT NULL,
      state            text NOT NULL CHECK (state IN ('pending', 'linked')),
      attempts         integer NOT NULL DEFAULT 0,
      next_attempt_at  timestamptz NOT NULL DEFAULT now(),
      last_error       text,
      linked_at        timestamptz
    )
  `.execute(db);
  // The reconciliation job only ever looks for due pending links; linked ones cost it nothing.
  await sql`
    CREATE INDEX photo_gear_links_pending_due ON photo_gear_links (next_attempt_at)
    WHERE state = 'pending'
  `.execute(db);
  // The consumer's effect of `photo.posted`; keyed by the event id like example_effects, so a second
  // effect for one event fails loudly instead of hiding a broken inbox.
  await sql`
    CREATE TABLE photo_feed (
      event_id   uuid PRIMARY KEY,
      photo_id   uuid NOT NULL,
      title      text NOT NULL,
      added_at   timestamptz NOT NULL DEFAULT now()
    )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE photo_feed`.execute(db);
  await sql`DROP TABLE photo_gear_links`.execute(db);
  await sql`DROP TABLE photos`.execute(db);
}
