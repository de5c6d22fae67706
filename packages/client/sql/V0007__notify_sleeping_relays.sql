-- V0007__notify_sleeping_relays.sql: the outbox migration 0007_notify_sleeping_relays as plain SQL.
-- Generated from packages/client/src/db/migrations/0007_notify_sleeping_relays.ts (why each statement is what it is)
-- by packages/client/scripts/write-sql-migrations.ts: do not edit. Apply the files in order, each in
-- one transaction, and none twice: migrateToLatest() and these files bookkeep alike (below).

CREATE OR REPLACE FUNCTION outbox_notify_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock_shared(1869968482, 2);
      IF pg_try_advisory_lock(1869968482, 1) THEN
        PERFORM pg_advisory_unlock(1869968482, 1);
      ELSE
        PERFORM pg_notify('outbox_inserted', '');
      END IF;
      RETURN NULL;
    END
    $$;

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
  VALUES ('0007_notify_sleeping_relays', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
