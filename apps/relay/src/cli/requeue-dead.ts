import { EXIT_CONFIG, EXIT_CRASH, EXIT_OK } from "@outbox/shared";
import { sql } from "kysely";
import { eventIdOption } from "./event-id-option.js";
import { openDatabase } from "./open-database.js";

/**
 * `relay requeue-dead [--id ID]`: dead rows (all, or one) get a fresh set of attempts and are available
 * at once. `last_error` stays as a record of why they died. A skipped row is requeued too (it comes
 * back as its key's head, behind none of the key's later events that went out meanwhile). Exit 1 when
 * `--id` names no dead row.
 */
export async function runRequeueDead(idOption: string | boolean | undefined, usage: string): Promise<number> {
  const id = eventIdOption(idOption, usage);
  const database = openDatabase("requeue-dead");
  if (!database) return EXIT_CONFIG;
  try {
    const result = await sql`
      UPDATE outbox
      SET dead_at = NULL, skipped_at = NULL, attempts = 0, available_at = now(), locked_until = NULL,
          locked_by = NULL
      WHERE dead_at IS NOT NULL AND published_at IS NULL ${id === undefined ? sql`` : sql`AND id = ${id}::uuid`}
    `.execute(database.db);
    const requeued = Number(result.numAffectedRows ?? 0);
    process.stdout.write(`${JSON.stringify({ requeued })}\n`);
    return id !== undefined && requeued === 0 ? EXIT_CRASH : EXIT_OK;
  } finally {
    await database.close(5_000);
  }
}
