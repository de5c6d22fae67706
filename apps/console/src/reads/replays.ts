import type { OutboxTables as Database } from "@outbox/client";
import { listRuns, type RepublishRun, readRun, rowsLeft } from "@outbox/relay/operations";
import type { Kysely } from "kysely";

/** One `relay republish` run and how far it got. */
export interface ReplayRun extends RepublishRun {
  /** Rows of its range not sent yet (after its cursor); 0 once finished. */
  readonly left: number;
}

/** The most runs a page lists, newest first. */
export const REPLAYS_LISTED = 50;

/**
 * The runs of `relay_republish` (migration 0013) with what each has left. What is left is a range
 * count of the outbox (rowsLeft); a run's range is fixed when it starts and only its cursor moves,
 * so a run is counted again only once its cursor moved (or it finished), not at every refresh of the
 * Replays view: a stopped run is counted once. (Rows the retention deletes from a stopped run's
 * range stay counted until it moves: it would skip them.)
 */
export class ReplayRuns {
  /** The last count of each listed run, and the cursor it was counted at. */
  readonly #counted = new Map<string, { readonly at: string; readonly left: number }>();

  constructor(private readonly db: Kysely<Database>) {}

  /** The latest REPLAYS_LISTED runs, newest first. */
  async latest(): Promise<ReplayRun[]> {
    const runs = await listRuns(this.db, REPLAYS_LISTED);
    const listed = new Set(runs.map((run) => run.id));
    for (const id of this.#counted.keys()) if (!listed.has(id)) this.#counted.delete(id);
    return Promise.all(runs.map((run) => this.#withLeft(run)));
  }

  /** The run `id` (a resume's preview); undefined when there is none. */
  async one(id: string): Promise<ReplayRun | undefined> {
    const run = await readRun(this.db, id);
    return run === undefined ? undefined : this.#withLeft(run);
  }

  async #withLeft(run: RepublishRun): Promise<ReplayRun> {
    const at = run.finished
      ? "finished"
      : run.cursor === null
        ? "start"
        : `${run.cursor.published}/${run.cursor.seq}`;
    const counted = this.#counted.get(run.id);
    if (counted?.at === at) return { ...run, left: counted.left };
    const left = await rowsLeft(this.db, run);
    this.#counted.set(run.id, { at, left });
    return { ...run, left };
  }
}
