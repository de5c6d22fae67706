-- V0013__relay_republish.sql: the outbox migration 0013_relay_republish as plain SQL.
-- Generated from packages/client/src/db/migrations/0013_relay_republish.ts (why each statement is what it is)
-- by packages/client/scripts/write-sql-migrations.ts: do not edit. Apply the files in order, each in
-- one transaction, and none twice: migrateToLatest() and these files bookkeep alike (below).

CREATE TABLE relay_republish (
      id                uuid PRIMARY KEY,
      from_published    timestamptz NOT NULL,
      to_published      timestamptz NOT NULL,
      topic             text NULL,
      ordering_key      text NULL,
      rate              integer NOT NULL CHECK (rate > 0),
      cursor_published  timestamptz NULL,
      cursor_seq        bigint NULL,
      sent              bigint NOT NULL DEFAULT 0,
      skipped           bigint NOT NULL DEFAULT 0,
      started_at        timestamptz NOT NULL DEFAULT now(),
      updated_at        timestamptz NOT NULL DEFAULT now(),
      finished_at       timestamptz NULL,
      CHECK (from_published < to_published),
      CHECK ((cursor_published IS NULL) = (cursor_seq IS NULL))
    );

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
  VALUES ('0013_relay_republish', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
