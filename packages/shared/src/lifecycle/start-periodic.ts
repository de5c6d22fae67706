import type { Logger } from "../log/logger.js";
import { sleep } from "./bounded-waits.js";

export interface PeriodicOptions {
  readonly intervalMs: number;
  /** Run a pass at once (cleanup that may be overdue), or wait an interval first (work that just ran elsewhere). */
  readonly runFirst: boolean;
  /** Where a failed pass is reported; a library user may give none. */
  readonly log?: Logger;
  /** The warning logged when a pass throws; the loop goes on and tries again at the next interval. */
  readonly failureMessage: string;
}

export interface Periodic {
  /** Ends the loop: aborts the pass's signal and resolves once no pass runs any more. */
  stop(): Promise<void>;
}

/**
 * Runs `pass` every `intervalMs` in the background until stopped. `pass` gets the stop signal, to end
 * a long pass between its statements; a failed pass is logged, never fatal.
 */
export function startPeriodic(
  pass: (stopped: AbortSignal) => Promise<void>,
  options: PeriodicOptions,
): Periodic {
  const stopped = new AbortController();
  const loop = (async () => {
    if (!options.runFirst) await sleep(options.intervalMs, stopped.signal);
    while (!stopped.signal.aborted) {
      try {
        await pass(stopped.signal);
      } catch (error) {
        options.log?.warn({ err: error }, options.failureMessage);
      }
      await sleep(options.intervalMs, stopped.signal);
    }
  })();
  return {
    async stop() {
      stopped.abort();
      await loop;
    },
  };
}
