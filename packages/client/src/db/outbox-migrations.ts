import type { Kysely } from "kysely";
import type { ClientLogger } from "../log/client-logger.js";
import { OUTBOX_MIGRATION_LOCK_TABLE, OUTBOX_MIGRATION_TABLE } from "../protocol.js";
import type { MigrationResult } from "./kysely-migrator.js";
import { type MigrationSet, migrateSetToLatest, pendingMigrationsIn } from "./migration-set.js";
import { migrations } from "./migrations/index.js";

const outboxMigrationSet: MigrationSet = {
  label: "migration",
  migrations,
  migrationTableName: OUTBOX_MIGRATION_TABLE,
  migrationLockTableName: OUTBOX_MIGRATION_LOCK_TABLE,
};

/**
 * Brings the outbox and inbox tables to their latest migration, bookkept in `outbox_migration`
 * beside the application's own kysely migrations; safe to run from several processes at once.
 */
export function migrateToLatest<DB>(db: Kysely<DB>, log?: ClientLogger): Promise<readonly MigrationResult[]> {
  return migrateSetToLatest(db, outboxMigrationSet, log);
}

/** The outbox migrations the database lacks, oldest first (see {@link pendingMigrationsIn}). */
export function pendingMigrations<DB>(db: Kysely<DB>): Promise<readonly string[]> {
  return pendingMigrationsIn(db, outboxMigrationSet);
}
