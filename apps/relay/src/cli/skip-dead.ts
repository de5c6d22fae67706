import { EXIT_CONFIG, EXIT_CRASH, EXIT_OK } from "@outbox/shared";
import { sql } from "kysely";
import { eventIdOption } from "./event-id-option.js";
import { openDatabase } from "./open-database.js";

/**
 * `relay skip-dead [--id ID]`: dead rows (all, or one) stop holding their ordering key, whose later
 * events then go out without them. The rows stay dead (never published unless requeued), with
 * `skipped_at` recording the decision. Exit 1 when `--id` names no dead row still holding its key.
 */
export async function runSkipDead(idOption: string | boolean | undefined, usage: string): Promise<number> {
  const id = eventIdOption(idOption, usage);
  const database = openDatabase("skip-dead");
  if (!database) return EXIT_CONFIG;
  try {
    const result = await sql`
      UPDATE outbox SET skipped_at = now()
      WHERE dead_at IS NOT NULL AND published_at IS NULL AND skipped_at IS NULL
        ${id === undefined ? sql`` : sql`AND id = ${id}::uuid`}
    `.execute(database.db);
    const skipped = Number(result.numAffectedRows ?? 0);
    process.stdout.write(`${JSON.stringify({ skipped })}\n`);
    return id !== undefined && skipped === 0 ? EXIT_CRASH : EXIT_OK;
  } finally {
    await database.close(5_000);
  }
}
