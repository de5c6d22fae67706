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

/**
 * The console's republish runs: each worked by workRepublish (as `relay republish`) on a connection
 * of its own, in the background, its progress kept in `relay_republish` after each batch, so the
 * Replays view watches it and a run cut by a stop of the console resumes with no gap.
 */
export class ReplayDesk {
  readonly #working = new Set<Promise<unknown>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly deps: WorkRunDeps,
  ) {}

  /**
   * Starts or resumes a run. Resolves once it is recorded and locked (the run) or was refused (why:
   * the safety rules of a replay, another process working it, no such run); the run goes on.
   */
  start(request: RepublishRequest): Promise<{ readonly run: RepublishRun } | RepublishRefusal> {
    return new Promise((resolve) => {
      const work = this.db
        .connection()
        .execute((db) => workRepublish(db, this.deps, request, (run) => resolve({ run })))
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
      void work.finally(() => this.#working.delete(work));
    });
  }

  /** Resolves once every run in hand has ended (at a stop: after its page in hand, resumable). */
  async runsEnded(): Promise<void> {
    await Promise.allSettled([...this.#working]);
  }
}
