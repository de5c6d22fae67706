import type { OutboxTables as Database } from "@outbox/client";
import { describeError } from "@outbox/client/internal";
import {
  type RepublishRefusal,
  type RepublishRequest,
  type RepublishRun,
  type WorkRunDeps,
  workRepublish,
} from "@outbox/relay/operations";
import { EXIT_CRASH } from "@outbox/shared";
import type { Kysely } from "kysely";

/** How a start ended: the run (started now, or by the same request before), or why not. */
export type ReplayStart =
  | { readonly run: RepublishRun; readonly again: boolean }
  | RepublishRefusal
  /** CONSOLE_REPUBLISH_RUNS runs are in hand: nothing started. */
  | { readonly busy: string };

/** How many request keys are remembered: a double submit comes within seconds, not hundreds of runs later. */
const KEYS_KEPT = 200;

/**
 * The console's republish runs: each worked by workRepublish (as `relay republish`) on a connection
 * of `db`, a pool of their own sized to `cap`, so no number of runs takes a page view's connection;
 * in the background, its progress kept in `relay_republish` after each batch, so the Replays view
 * watches it and a run cut by a stop (of the console, or of the run) resumes with no gap.
 */
export class ReplayDesk {
  readonly #working = new Set<Promise<unknown>>();
  /** The runs in hand, by id: what stops each one. */
  readonly #stops = new Map<string, AbortController>();
  /** Each request key's start: the same confirmation posted twice is one run. */
  readonly #starts = new Map<string, Promise<ReplayStart>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly deps: WorkRunDeps,
    private readonly cap: number,
  ) {}

  /**
   * Starts or resumes a run, once per `key` (the confirmation's request key: a second post of it
   * answers the first one's run, `again`). Resolves once it is recorded and locked (the run), or
   * refused (the safety rules of a replay, another process working it, no such run, the cap
   * reached); the run goes on.
   */
  start(request: RepublishRequest, key: string): Promise<ReplayStart> {
    const earlier = this.#starts.get(key);
    if (earlier !== undefined) {
      return earlier.then((start) => ("run" in start ? { run: start.run, again: true } : start));
    }
    if (this.#working.size >= this.cap) {
      return Promise.resolve({
        busy: `${this.#working.size} republish runs are in hand, the most this console works at once (CONSOLE_REPUBLISH_RUNS=${this.cap}): stop one, or wait for one to end`,
      });
    }
    const stop = new AbortController();
    const stopping = AbortSignal.any([this.deps.stopping, stop.signal]);
    let ran: string | undefined;
    const started = new Promise<ReplayStart>((resolve) => {
      const work = this.db
        .connection()
        .execute((db) =>
          workRepublish(db, { ...this.deps, stopping }, request, (run) => {
            ran = run.id;
            this.#stops.set(run.id, stop);
            resolve({ run, again: false });
          }),
        )
        .then(
          (outcome) => {
            if ("refused" in outcome) resolve(outcome);
            else this.deps.log.info(outcome, "republish done");
          },
          (error: unknown) => {
            this.deps.log.error({ err: error }, "republish failed; resume it from the Replays view");
            resolve({ refused: describeError(error), code: EXIT_CRASH });
          },
        );
      this.#working.add(work);
      void work.finally(() => {
        this.#working.delete(work);
        if (ran !== undefined) this.#stops.delete(ran);
      });
    });
    this.#starts.set(key, started);
    if (this.#starts.size > KEYS_KEPT) this.#starts.delete(this.#starts.keys().next().value as string);
    return started;
  }

  /** Stops run `id` after its page in hand (its cursor saved, resumable); false when it is not in hand here. */
  stop(id: string): boolean {
    const stop = this.#stops.get(id);
    stop?.abort();
    return stop !== undefined;
  }

  /** The ids of the runs in hand (the Replays view offers to stop them). */
  running(): ReadonlySet<string> {
    return new Set(this.#stops.keys());
  }

  /** Resolves once every run in hand has ended (at a stop: after its page in hand, resumable). */
  async runsEnded(): Promise<void> {
    await Promise.allSettled([...this.#working]);
  }
}
