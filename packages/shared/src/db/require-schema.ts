import { type MigrationSet, pendingMigrations, pendingMigrationsIn } from "@outbox/client";
import type { Kysely } from "kysely";
import { tooOldPostgresLineOf } from "./postgres-version.js";

/** How an operator applies the outbox's migrations, from a checkout and inside an image. */
const MIGRATE_COMMAND =
  "`pnpm migrate` (in an image: node node_modules/@outbox/shared/dist/db/migrate-cli.js)";

/** The migration sets a program needs beyond the outbox's, and the command that applies them all. */
export interface ServiceSchema {
  readonly sets: readonly MigrationSet[];
  /** e.g. "`pnpm migrate --api` (in an image: node dist/main.js migrate)" */
  readonly migrateCommand: string;
}

/**
 * The one line a program prints instead of starting on a database it cannot run on: a Postgres
 * older than 13 (tooOldPostgresLine), or one that lacks migrations (every query would fail on a
 * missing table or column, and a daemon would log "batch failed" forever); undefined when the
 * schema is current. The outbox's migrations, then `service`'s sets. Rejects when the database
 * cannot be asked.
 */
export async function missingSchemaLine<DB>(
  db: Kysely<DB>,
  program: string,
  service?: ServiceSchema,
): Promise<string | undefined> {
  const tooOld = await tooOldPostgresLineOf(db, program);
  if (tooOld !== undefined) return tooOld;
  const sets = await Promise.all((service?.sets ?? []).map((set) => pendingMigrationsIn(db, set)));
  const pending = [...(await pendingMigrations(db)), ...sets.flat()];
  const first = pending[0];
  if (first === undefined) return undefined;
  const names = pending.length === 1 ? first : `${pending.length} migrations, ${first} to ${pending.at(-1)}`;
  const command = service?.migrateCommand ?? MIGRATE_COMMAND;
  return `${program}: the database lacks ${names}; apply them with ${command}, then start again\n`;
}
