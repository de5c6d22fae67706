import { sql } from "kysely";
import { runDeadRowsCommand } from "./dead-rows-command.js";

/**
 * `relay requeue-dead [--id ID]`: dead rows (all, or one) get a fresh set of attempts and are available
 * at once. `last_error` stays as a record of why they died. A skipped row is requeued too: it is again
 * its key's head, and goes out before the events waiting behind it. Exit 1 when `--id` names no dead row.
 */
export function runRequeueDead(id: string | boolean | undefined, usage: string): Promise<number> {
  return runDeadRowsCommand("requeue-dead", "requeued", id, usage, async (db, only) => {
    const result = await sql`
      UPDATE outbox
      SET dead_at = NULL, skipped_at = NULL, attempts = 0, available_at = now(), locked_until = NULL,
          locked_by = NULL
      WHERE dead_at IS NOT NULL AND published_at IS NULL ${only === undefined ? sql`` : sql`AND id = ${only}::uuid`}
    `.execute(db);
    return Number(result.numAffectedRows ?? 0);
  });
}
