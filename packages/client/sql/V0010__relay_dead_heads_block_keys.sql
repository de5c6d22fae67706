-- V0010__relay_dead_heads_block_keys.sql: the outbox migration 0010_relay_dead_heads_block_keys as plain SQL.
-- Generated from packages/client/src/db/migrations/0010_relay_dead_heads_block_keys.ts (why each statement is what it is)
-- by packages/client/scripts/write-sql-migrations.ts: do not edit. Apply the files in order, each in
-- one transaction, and none twice: migrateToLatest() and these files bookkeep alike (below).

ALTER TABLE outbox ADD COLUMN skipped_at timestamptz;

UPDATE outbox SET skipped_at = dead_at WHERE dead_at IS NOT NULL AND published_at IS NULL;

CREATE INDEX outbox_dead_heads ON outbox (ordering_key)
      WHERE dead_at IS NOT NULL AND published_at IS NULL AND skipped_at IS NULL AND ordering_key IS NOT NULL;

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
  VALUES ('0010_relay_dead_heads_block_keys', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
