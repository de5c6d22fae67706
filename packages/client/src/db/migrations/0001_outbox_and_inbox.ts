import { type Kysely, sql } from "kysely";
import { OUTBOX_CHANNEL } from "../../protocol.js";

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE outbox (
      id            uuid PRIMARY KEY,
      -- The relay publishes in seq order; an identity column gives commit-independent, gap-tolerant order.
      seq           bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      topic         text NOT NULL,
      ordering_key  text NULL,
      event_type    text NOT NULL,
      payload       jsonb NOT NULL,
      headers       jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at    timestamptz NOT NULL DEFAULT now(),
      attempts      integer NOT NULL DEFAULT 0,
      available_at  timestamptz NOT NULL DEFAULT now(),
      locked_until  timestamptz NULL,
      locked_by     text NULL,
      published_at  timestamptz NULL,
      dead_at       timestamptz NULL,
      last_error    text NULL
    )
  `.execute(db);

  // The claim query walks pending rows by seq. Published and dead rows are the vast majority of a
  // long-lived table, so a partial index keeps the hot path as small as the backlog itself.
  // (available_at <= now() cannot be part of the predicate: now() is not immutable.)
  await sql`
    CREATE INDEX outbox_pending_by_seq ON outbox (seq)
      INCLUDE (available_at, locked_until, ordering_key)
      WHERE published_at IS NULL AND dead_at IS NULL
  `.execute(db);

  // Retention deletes published rows by age.
  await sql`CREATE INDEX outbox_published_at ON outbox (published_at) WHERE published_at IS NOT NULL`.execute(
    db,
  );

  // Statement-level, not row-level: a 1 000-row enqueue wakes the relay once, not 1 000 times.
  // NOTIFY is delivered at commit, so a relay never wakes for rows it cannot see yet.
  await sql`
    CREATE FUNCTION outbox_notify_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify(${sql.lit(OUTBOX_CHANNEL)}, '');
      RETURN NULL;
    END
    $$
  `.execute(db);
  await sql`
    CREATE TRIGGER outbox_inserted AFTER INSERT ON outbox
      FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify_inserted()
  `.execute(db);

  await sql`
    CREATE TABLE inbox (
      consumer      text NOT NULL,
      event_id      uuid NOT NULL,
      message_id    text NOT NULL,
      received_at   timestamptz NOT NULL DEFAULT now(),
      processed_at  timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (consumer, event_id)
    )
  `.execute(db);
  await sql`CREATE INDEX inbox_processed_at ON inbox (processed_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE inbox`.execute(db);
  await sql`DROP TRIGGER outbox_inserted ON outbox`.execute(db);
  await sql`DROP FUNCTION outbox_notify_inserted()`.execute(db);
  await sql`DROP TABLE outbox`.execute(db);
}
