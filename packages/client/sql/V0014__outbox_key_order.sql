-- V0014__outbox_key_order.sql: the outbox migration 0014_outbox_key_order as plain SQL.
-- Generated from packages/client/src/db/migrations/0014_outbox_key_order.ts (why each statement is what it is)
-- by packages/client/scripts/write-sql-migrations.ts: do not edit. Apply the files in order, each in
-- one transaction, and none twice: migrateToLatest() and these files bookkeep alike (below).

CREATE FUNCTION outbox_key_turn() RETURNS trigger LANGUAGE plpgsql
      SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(
        1869968491, ('x' || left(md5(NEW.ordering_key), 8))::bit(32)::int);
      NEW.seq := nextval(pg_get_serial_sequence(TG_RELID::regclass::text, 'seq'));
      RETURN NEW;
    END
    $$;

CREATE TRIGGER outbox_key_turn BEFORE INSERT ON outbox
      FOR EACH ROW WHEN (NEW.ordering_key IS NOT NULL) EXECUTE FUNCTION outbox_key_turn();

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
  VALUES ('0014_outbox_key_order', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
