import { performance } from "node:perf_hooks";

export interface LoopWatchSettings {
  /** The loop, as `/livez` names it: "poll loop", "claim loop". */
  readonly loop: string;
  /** The step it waits on, as `/livez` names it: "receive", "claim". */
  readonly step: string;
  /**
   * The longest the step can take while every timeout under it works (its own timeouts and retries,
   * summed): past it, a timeout did not fire and the loop will not turn again by itself.
   */
  readonly boundMs: number;
}

/**
 * Whether a loop still turns, for `/livez`. The loop runs the one step it cannot turn without (the
 * consumer's receive, the relay's claim) through `step`; the watch knows only how long the oldest such
 * step has been running. Everything else a loop waits on is left out on purpose: a paused intake, a
 * full set of slots, an idle sleep, a backoff or a stop are waits the loop chose, each ended by
 * something of its own, and a process restarted during one would do no better.
 */
export class LoopWatch {
  readonly #settings: LoopWatchSettings;
  /** The start of each step in flight, oldest first (a Set iterates in insertion order). */
  readonly #running = new Set<{ readonly startedAt: number }>();

  constructor(settings: LoopWatchSettings) {
    this.#settings = settings;
  }

  async step<T>(run: () => Promise<T>): Promise<T> {
    const entry = { startedAt: performance.now() };
    this.#running.add(entry);
    try {
      return await run();
    } finally {
      this.#running.delete(entry);
    }
  }

  /** Why the loop counts as stuck now (for `/livez`'s 503), or undefined while it turns. */
  stalled(): string | undefined {
    const [oldest] = this.#running;
    if (oldest === undefined) return undefined;
    const runningMs = Math.round(performance.now() - oldest.startedAt);
    const { loop, step, boundMs } = this.#settings;
    if (runningMs <= boundMs) return undefined;
    return `${loop} stalled: a ${step} has been running for ${runningMs} ms, past its bound of ${boundMs} ms`;
  }
}
