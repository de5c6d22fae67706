import { type Kysely, type MigrationResult, Migrator } from "kysely";
import type { ClientLogger } from "../log/client-logger.js";
import { migrations } from "./migrations/index.js";
import type { Database } from "./schema.js";

export class MigrationError extends Error {
  override readonly name = "MigrationError";
}

/** Brings the schema to the latest migration; safe to run from several processes at once (kysely locks). */
export async function migrateToLatest(
  db: Kysely<Database>,
  log?: ClientLogger,
): Promise<readonly MigrationResult[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results = [] } = await migrator.migrateToLatest();
  for (const result of results) {
    log?.info({ migration: result.migrationName, status: result.status }, "migration");
  }
  if (error) {
    const failed = results.find((result) => result.status === "Error")?.migrationName ?? "unknown";
    throw new MigrationError(
      `migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }
  return results;
}
