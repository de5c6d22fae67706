import type { Kysely } from "kysely";
import type { ClientLogger } from "../log/client-logger.js";
import { describeError } from "../log/describe-error.js";
import { adoptDefaultBookkeeping, DEFAULT_MIGRATION_TABLE } from "./adopt-default-bookkeeping.js";
import {
  createMigrator,
  type Migration,
  type MigrationResult,
  type MigratorLike,
} from "./kysely-migrator.js";

export class MigrationError extends Error {
  override readonly name = "MigrationError";
}

/**
 * A list of migrations with kysely bookkeeping tables of its own, so several sets (the outbox's, a
 * service's, the application's) share one database without seeing each other's rows.
 */
export interface MigrationSet {
  /** How its log lines and errors name it, e.g. `migration`. */
  readonly label: string;
  readonly migrations: Readonly<Record<string, Migration>>;
  readonly migrationTableName: string;
  readonly migrationLockTableName: string;
}

/**
 * Runs `migrator` to its latest migration, logging each result under `label`; throws a MigrationError
 * naming the migration that failed. For a migration set of an application's own (its own kysely
 * `Migrator`, e.g. with its own `migrationTableName`), reported the way ours is.
 */
export async function runMigrator(
  migrator: MigratorLike,
  label: string,
  log?: ClientLogger,
): Promise<readonly MigrationResult[]> {
  const { error, results = [] } = await migrator.migrateToLatest();
  for (const result of results) {
    log?.info({ migration: result.migrationName, status: result.status }, label);
  }
  if (error) {
    const failed = results.find((result) => result.status === "Error")?.migrationName ?? "unknown";
    throw new MigrationError(`${label} ${failed} failed: ${describeError(error)}`, { cause: error });
  }
  return results;
}

function migratorFor<DB>(db: Kysely<DB>, set: MigrationSet, migrationTableName = set.migrationTableName) {
  return createMigrator({
    db,
    migrations: set.migrations,
    migrationTableName,
    migrationLockTableName: set.migrationLockTableName,
  });
}

/**
 * Brings `set` to its latest migration; safe to run from several processes at once (kysely locks).
 * First takes over the set's rows from kysely's default table, where earlier releases kept them, so
 * nothing already applied runs again.
 */
export async function migrateSetToLatest<DB>(
  db: Kysely<DB>,
  set: MigrationSet,
  log?: ClientLogger,
): Promise<readonly MigrationResult[]> {
  const adopted = await adoptDefaultBookkeeping(db, set.migrationTableName, Object.keys(set.migrations));
  if (adopted.length > 0) {
    log?.info(
      { migrations: adopted, from: DEFAULT_MIGRATION_TABLE, to: set.migrationTableName },
      `${set.label} bookkeeping moved`,
    );
  }
  return runMigrator(await migratorFor(db, set), set.label, log);
}

/**
 * The names of `set`'s migrations that the database has not applied, oldest first; empty when the
 * schema is current. Reads only: on a database never migrated it creates nothing (kysely's own tables
 * included) and names every migration. A migration recorded in kysely's default table (a database
 * not migrated since the set got its own) counts as applied. Migrations the database has and the set
 * does not know (a newer release ran first) are not its concern.
 */
export async function pendingMigrationsIn<DB>(db: Kysely<DB>, set: MigrationSet): Promise<readonly string[]> {
  const [own, legacy] = await Promise.all([
    migratorFor(db, set).then((migrator) => migrator.getMigrations()),
    migratorFor(db, set, DEFAULT_MIGRATION_TABLE).then((migrator) => migrator.getMigrations()),
  ]);
  const appliedBefore = new Set(
    legacy.filter((migration) => migration.executedAt !== undefined).map((migration) => migration.name),
  );
  return own
    .filter((migration) => migration.executedAt === undefined && !appliedBefore.has(migration.name))
    .map((migration) => migration.name);
}
