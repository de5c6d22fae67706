import { migrateSetToLatest, migrateToLatest } from "@outbox/client";
import { type ApplyMigrations, applyMigrations, packageVersion, type ServiceSchema } from "@outbox/shared";
import { photoMigrations } from "./migrations/index.js";

/** The photo service's tables to their latest migration (after the outbox's: it enqueues). */
export const migrateApiTables: ApplyMigrations = (db, log) => migrateSetToLatest(db, photoMigrations, log);

/** What the service and `api reconcile` check before they start, beyond the outbox's migrations. */
export const apiSchema: ServiceSchema = {
  sets: [photoMigrations],
  migrateCommand: "`pnpm migrate --api` (in an image: node dist/main.js migrate)",
};

/** `api migrate`: every table the service uses, the outbox's and its own; resolves with the exit code. */
export function runApiMigrate(): Promise<number> {
  return applyMigrations("api migrate", [migrateToLatest, migrateApiTables], packageVersion(import.meta.url));
}
