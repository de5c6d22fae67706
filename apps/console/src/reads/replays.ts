import type { OutboxTables as Database } from "@outbox/client";
import { listRuns, type RepublishRun, readRun, rowsLeft } from "@outbox/relay/operations";
import type { Kysely } from "kysely";

/** One `relay republish` run and how far it got. */
export interface ReplayRun extends RepublishRun {
  /** Rows of its range not sent yet (after its cursor); 0 once finished. */
  readonly left: number;
  /** More rows than `left` are left: the count stopped at LEFT_CAP (the page says `left+`). */
  readonly leftCapped: boolean;
}

/** The most runs a page lists, newest first. */
export const REPLAYS_LISTED = 50;

/** The most rows of a run's range counted (rowsLeft's cap): a range of millions is not read whole. */
export const LEFT_CAP = 50_000;

/** A run's last count: what was left, and how far the run was (sent + skipped) then. */
interface Counted {
  readonly left: number;
  readonly capped: boolean;
  readonly passed: number;
}

/**
 * The runs of `relay_republish` (migration 0013) with what each has left. What is left is a range
 * count of the outbox (rowsLeft), made once per run: a run's range is fixed when it starts and its
 * cursor passes each row of it once, sent or skipped, so what is left later is that count less what
 * the run passed since. A moving run is not counted again at each refresh of the Replays view, nor
 * after each batch. A count past LEFT_CAP stops there (`left+`), and is made again only once the run
 * passed half of it. (Rows the retention deletes from a range stay counted: the run skips them.)
 */
export class ReplayRuns {
  readonly #counted = new Map<string, Counted>();

  constructor(private readonly db: Kysely<Database>) {}

  /** The latest REPLAYS_LISTED runs, newest first. */
  async latest(): Promise<ReplayRun[]> {
    const runs = await listRuns(this.db, REPLAYS_LISTED);
    const listed = new Set(runs.map((run) => run.id));
    for (const id of this.#counted.keys()) if (!listed.has(id)) this.#counted.delete(id);
    return Promise.all(runs.map((run) => this.#withLeft(run)));
  }

  /** The run `id` with what it has left counted exactly (a resume's preview); undefined when there is none. */
  async one(id: string): Promise<ReplayRun | undefined> {
    const run = await readRun(this.db, id);
    return run === undefined ? undefined : { ...run, left: await rowsLeft(this.db, run), leftCapped: false };
  }

  async #withLeft(run: RepublishRun): Promise<ReplayRun> {
    if (run.finished) return { ...run, left: 0, leftCapped: false };
    const passed = run.sent + run.skipped;
    const counted = this.#counted.get(run.id);
    if (counted !== undefined && (!counted.capped || passed - counted.passed < LEFT_CAP / 2)) {
      return {
        ...run,
        left: Math.max(0, counted.left - (passed - counted.passed)),
        leftCapped: counted.capped,
      };
    }
    const read = await rowsLeft(this.db, run, LEFT_CAP);
    const capped = read > LEFT_CAP;
    const left = capped ? LEFT_CAP : read;
    this.#counted.set(run.id, { left, capped, passed });
    return { ...run, left, leftCapped: capped };
  }
}
