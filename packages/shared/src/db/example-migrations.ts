import type { ClientLogger } from "@outbox/client";
import { runMigrator } from "@outbox/client/internal";
import { type Kysely, type Migration, type MigrationResult, Migrator, sql } from "kysely";

/**
 * The consumer demo's tables (apps/consumer/src/example-handlers.ts writes `example_effects`): a
 * migration set of its own, with its own bookkeeping tables, so the production list
 * (`migrateToLatest`) holds only the outbox's schema. Here rather than next to the handlers because
 * the migrate command (`migrate --demo`) lives in this package and ships in the relay image.
 */
export const exampleMigrations: Record<string, Migration> = {
  "0001_example_effects": {
    // Its primary key is the event id, so a second effect for one event would fail loudly instead
    // of hiding a broken inbox. IF NOT EXISTS: a database that ran production 0003 before 0008.
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`
        CREATE TABLE IF NOT EXISTS example_effects (
          event_id    uuid PRIMARY KEY,
          event_type  text NOT NULL,
          payload     jsonb NOT NULL,
          applied_at  timestamptz NOT NULL DEFAULT now()
        )
      `.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await sql`DROP TABLE IF EXISTS example_effects`.execute(db);
    },
  },
};

export const EXAMPLE_MIGRATION_TABLE = "outbox_demo_migration";
export const EXAMPLE_MIGRATION_LOCK_TABLE = "outbox_demo_migration_lock";

/**
 * Brings the demo's tables to their latest migration. Run it after `migrateToLatest`: production
 * 0008 drops `example_effects`, so applying it later would drop the demo's table.
 */
export function migrateExampleTables<DB>(
  db: Kysely<DB>,
  log?: ClientLogger,
): Promise<readonly MigrationResult[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => exampleMigrations },
    migrationTableName: EXAMPLE_MIGRATION_TABLE,
    migrationLockTableName: EXAMPLE_MIGRATION_LOCK_TABLE,
  });
  return runMigrator(migrator, "demo migration", log);
}
