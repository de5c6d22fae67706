import { EXIT_CONFIG, EXIT_CRASH, EXIT_OK } from "@outbox/shared";
import { usageError } from "@outbox/shared/command-line";
import { sql } from "kysely";
import { openDatabase } from "./open-database.js";

/**
 * `relay requeue-dead [--id ID]`: dead rows (all, or one) get a fresh set of attempts and are available
 * at once. `last_error` stays as a record of why they died. Exit 1 when `--id` names no dead row.
 */
export async function runRequeueDead(id: string | boolean | undefined, usage: string): Promise<number> {
  if (id !== undefined && (typeof id !== "string" || !/^[0-9a-f-]{36}$/i.test(id))) {
    return usageError(usage, `--id needs an event id (a UUID), got "${String(id)}"`);
  }
  const database = await openDatabase("requeue-dead");
  if (!database) return EXIT_CONFIG;
  try {
    const result = await sql`
      UPDATE outbox
      SET dead_at = NULL, attempts = 0, available_at = now(), locked_until = NULL, locked_by = NULL
      WHERE dead_at IS NOT NULL ${id === undefined ? sql`` : sql`AND id = ${id}::uuid`}
    `.execute(database.db);
    const requeued = Number(result.numAffectedRows ?? 0);
    process.stdout.write(`${JSON.stringify({ requeued })}\n`);
    return id !== undefined && requeued === 0 ? EXIT_CRASH : EXIT_OK;
  } finally {
    await database.close(5_000);
  }
}
