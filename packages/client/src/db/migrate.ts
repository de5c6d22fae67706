import { type Kysely, type MigrationResult, Migrator } from "kysely";
import type { ClientLogger } from "../log/client-logger.js";
import { migrations } from "./migrations/index.js";
import type { Database } from "./schema.js";

export class MigrationError extends Error {
  override readonly name = "MigrationError";
}

/**
 * Runs `migrator` to its latest migration, logging each result under `label`; throws a MigrationError
 * naming the migration that failed. For a migration set of an application's own (its own kysely
 * `Migrator`, e.g. with its own `migrationTableName`), reported the way ours is.
 */
export async function runMigrator(
  migrator: Migrator,
  label: string,
  log?: ClientLogger,
): Promise<readonly MigrationResult[]> {
  const { error, results = [] } = await migrator.migrateToLatest();
  for (const result of results) {
    log?.info({ migration: result.migrationName, status: result.status }, label);
  }
  if (error) {
    const failed = results.find((result) => result.status === "Error")?.migrationName ?? "unknown";
    throw new MigrationError(
      `${label} ${failed} failed: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  return results;
}

function outboxMigrator(db: Kysely<Database>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations } });
}

/** Brings the schema to the latest migration; safe to run from several processes at once (kysely locks). */
export function migrateToLatest(
  db: Kysely<Database>,
  log?: ClientLogger,
): Promise<readonly MigrationResult[]> {
  return runMigrator(outboxMigrator(db), "migration", log);
}

/**
 * The names of this package's migrations that the database has not applied, oldest first; empty
 * when the schema is current. Reads only: on a database never migrated it creates nothing (kysely's
 * own tables included) and names every migration. Migrations the database has and this package does
 * not know (a newer release ran first) are not its concern.
 */
export async function pendingMigrations(db: Kysely<Database>): Promise<readonly string[]> {
  const known = await outboxMigrator(db).getMigrations();
  return known.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}
