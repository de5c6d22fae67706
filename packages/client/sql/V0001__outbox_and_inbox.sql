-- V0001__outbox_and_inbox.sql: the outbox migration 0001_outbox_and_inbox as plain SQL.
-- Generated from packages/client/src/db/migrations/0001_outbox_and_inbox.ts (why each statement is what it is)
-- by packages/client/scripts/write-sql-migrations.ts: do not edit. Apply the files in order, each in
-- one transaction, and none twice: migrateToLatest() and these files bookkeep alike (below).

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
    );

CREATE INDEX outbox_pending_by_seq ON outbox (seq)
      INCLUDE (available_at, locked_until, ordering_key)
      WHERE published_at IS NULL AND dead_at IS NULL;

CREATE INDEX outbox_published_at ON outbox (published_at) WHERE published_at IS NOT NULL;

CREATE FUNCTION outbox_notify_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('outbox_inserted', '');
      RETURN NULL;
    END
    $$;

CREATE TRIGGER outbox_inserted AFTER INSERT ON outbox
      FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify_inserted();

CREATE TABLE inbox (
      consumer      text NOT NULL,
      event_id      uuid NOT NULL,
      message_id    text NOT NULL,
      received_at   timestamptz NOT NULL DEFAULT now(),
      processed_at  timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (consumer, event_id)
    );

CREATE INDEX inbox_processed_at ON inbox (processed_at);

-- Bookkept as migrateToLatest does (kysely's Migrator, in the outbox's own tables), so that
-- pendingMigrations() finds this migration applied and migrateToLatest() never runs it again.
CREATE TABLE IF NOT EXISTS outbox_migration (
  "name" varchar(255) NOT NULL PRIMARY KEY,
  "timestamp" varchar(255) NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox_migration_lock (
  "id" varchar(255) NOT NULL PRIMARY KEY,
  "is_locked" integer NOT NULL DEFAULT 0
);
INSERT INTO outbox_migration_lock ("id", "is_locked") VALUES ('migration_lock', 0)
  ON CONFLICT ("id") DO NOTHING;
-- kysely writes the time as an ISO 8601 UTC string.
INSERT INTO outbox_migration ("name", "timestamp")
  VALUES ('0001_outbox_and_inbox', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
