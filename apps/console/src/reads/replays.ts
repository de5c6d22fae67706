import type { OutboxTables as Database } from "@outbox/client";
import { listRuns, type RepublishRun, rowsLeft } from "@outbox/relay/operations";
import type { Kysely } from "kysely";

/** One `relay republish` run and how far it got. */
export interface ReplayRun extends RepublishRun {
  /** Rows of its range not sent yet (after its cursor); 0 once finished. */
  readonly left: number;
}

/** The most runs a page lists, newest first. */
export const REPLAYS_LISTED = 50;

/** The latest runs of `relay_republish` (migration 0013), each with what is left of its range. */
export async function listReplays(db: Kysely<Database>): Promise<ReplayRun[]> {
  const runs = await listRuns(db, REPLAYS_LISTED);
  const left = await Promise.all(runs.map((run) => rowsLeft(db, run)));
  return runs.map((run, index) => ({ ...run, left: left[index] ?? 0 }));
}
