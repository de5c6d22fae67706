import type { OutboxTables as Database } from "@outbox/client";
import { EXIT_CONFIG, EXIT_CRASH, EXIT_OK, isUuid } from "@outbox/shared";
import { usageError } from "@outbox/shared/command-line";
import { type Kysely, type RawBuilder, sql } from "kysely";
import { openDatabase } from "./open-database.js";

/**
 * The frame of a command that acts on dead rows (`requeue-dead`, `skip-dead`): `--id` absent (every
 * row) or an event id (a UUID, anything else a usage error); one statement, `change`, that answers how
 * many rows it changed; `{"<counted>":N}` on stdout; exit 1 when `--id` named no row it could change.
 */

/** `--id`'s event id, undefined when absent; anything but a UUID is a usage error (exit 64). */
export function deadRowId(id: string | boolean | undefined, usage: string): string | undefined {
  if (id !== undefined && (typeof id !== "string" || !isUuid(id))) {
    return usageError(usage, `--id needs an event id (a UUID), got "${String(id)}"`);
  }
  return id;
}

/**
 * The extra condition of a statement on dead rows: none (every row), or the id of `row` (the alias of
 * the outbox row tested, if any) among `ids` — checked as UUIDs by Postgres, so a malformed one is
 * refused by the statement, not matched by nothing.
 */
export function onlyRows(ids: readonly string[] | undefined, row?: string): RawBuilder<unknown> {
  if (ids === undefined) return sql``;
  return sql`AND ${sql.ref(row === undefined ? "id" : `${row}.id`)} = ANY(${[...ids]}::uuid[])`;
}

export async function runDeadRowsCommand(
  command: string,
  counted: string,
  id: string | boolean | undefined,
  usage: string,
  change: (db: Kysely<Database>, ids: readonly string[] | undefined) => Promise<number>,
): Promise<number> {
  const only = deadRowId(id, usage);
  const database = await openDatabase(command);
  if (!database) return EXIT_CONFIG;
  try {
    const changed = await change(database.db, only === undefined ? undefined : [only]);
    process.stdout.write(`${JSON.stringify({ [counted]: changed })}\n`);
    return only !== undefined && changed === 0 ? EXIT_CRASH : EXIT_OK;
  } finally {
    await database.close(5_000);
  }
}
