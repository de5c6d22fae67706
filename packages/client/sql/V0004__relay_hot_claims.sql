-- V0004__relay_hot_claims.sql: the outbox migration 0004_relay_hot_claims as plain SQL.
-- Generated from packages/client/src/db/migrations/0004_relay_hot_claims.ts (why each statement is what it is)
-- by packages/client/scripts/write-sql-migrations.ts: do not edit. Apply the files in order, each in
-- one transaction, and none twice: migrateToLatest() and these files bookkeep alike (below).

ALTER TABLE outbox SET (fillfactor = 70);

DROP INDEX outbox_pending_by_seq;

CREATE INDEX outbox_pending_by_seq ON outbox (seq) WHERE published_at IS NULL AND dead_at IS NULL;

DROP INDEX outbox_pending_by_key;

CREATE INDEX outbox_pending_by_key ON outbox (ordering_key, seq)
      WHERE published_at IS NULL AND dead_at IS NULL AND ordering_key IS NOT NULL;

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
  VALUES ('0004_relay_hot_claims', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
