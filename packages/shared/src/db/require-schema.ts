import { type Database, pendingMigrations } from "@outbox/client";
import type { Kysely } from "kysely";

/** How an operator applies the migrations, from a checkout and inside an image. */
const MIGRATE_COMMAND =
  "`pnpm migrate` (in an image: node node_modules/@outbox/shared/dist/db/migrate-cli.js)";

/**
 * The one line a program prints instead of starting on a database that lacks migrations (every
 * query would fail on a missing table or column, and a daemon would log "batch failed" forever);
 * undefined when the schema is current. Rejects when the database cannot be asked.
 */
export async function missingSchemaLine(db: Kysely<Database>, program: string): Promise<string | undefined> {
  const pending = await pendingMigrations(db);
  const first = pending[0];
  if (first === undefined) return undefined;
  const names = pending.length === 1 ? first : `${pending.length} migrations, ${first} to ${pending.at(-1)}`;
  return `${program}: the database lacks ${names}; apply them with ${MIGRATE_COMMAND}, then start again\n`;
}
