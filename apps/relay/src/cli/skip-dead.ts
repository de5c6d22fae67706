import type { OutboxTables as Database } from "@outbox/client";
import { type Kysely, sql } from "kysely";
import { holdsItsKey } from "../dead-heads.js";
import { onlyRows, runDeadRowsCommand } from "./dead-rows-command.js";

/**
 * Dead rows (all of them, or those of `ids`) stop holding their ordering key, whose later events then
 * go out without them. The rows stay dead (never published unless requeued), with `skipped_at`
 * recording the decision. Answers how many rows it changed. The one home of a skip: `relay
 * skip-dead` and the operator console call it.
 */
export async function skipDeadRows(
  db: Kysely<Database>,
  ids: readonly string[] | undefined,
): Promise<number> {
  const result = await sql`
    UPDATE outbox SET skipped_at = now()
    WHERE ${holdsItsKey("outbox")} ${onlyRows(ids)}
  `.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** `relay skip-dead [--id ID]`: skipDeadRows. Exit 1 when `--id` names no dead row still holding its key. */
export function runSkipDead(id: string | boolean | undefined, usage: string): Promise<number> {
  return runDeadRowsCommand("skip-dead", "skipped", id, usage, skipDeadRows);
}
