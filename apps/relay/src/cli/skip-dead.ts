import { sql } from "kysely";
import { holdsItsKey } from "../dead-heads.js";
import { runDeadRowsCommand } from "./dead-rows-command.js";

/**
 * `relay skip-dead [--id ID]`: dead rows (all, or one) stop holding their ordering key, whose later
 * events then go out without them. The rows stay dead (never published unless requeued), with
 * `skipped_at` recording the decision. Exit 1 when `--id` names no dead row still holding its key.
 */
export function runSkipDead(id: string | boolean | undefined, usage: string): Promise<number> {
  return runDeadRowsCommand("skip-dead", "skipped", id, usage, async (db, only) => {
    const result = await sql`
      UPDATE outbox SET skipped_at = now()
      WHERE ${holdsItsKey("outbox")}
        ${only === undefined ? sql`` : sql`AND id = ${only}::uuid`}
    `.execute(db);
    return Number(result.numAffectedRows ?? 0);
  });
}
