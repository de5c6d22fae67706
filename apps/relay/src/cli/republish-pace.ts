import { performance } from "node:perf_hooks";
import { sleep } from "@outbox/shared";

/** The time a pace is kept by: the process's monotonic clock, or a test's own. */
export interface PaceClock {
  /** Milliseconds, monotonic. */
  now(): number;
  wait(ms: number): Promise<void>;
}

const realClock: PaceClock = { now: () => performance.now(), wait: (ms) => sleep(ms) };

/**
 * `relay republish --rate N`: the k-th event of the run (from 0) leaves no earlier than k/N seconds
 * after the first. A batch of `count` waits for its first event's turn, so by any moment t the run
 * has sent at most N·t events plus one batch — the batch being at most min(10, N), the caller's choice.
 * Measured from the run's own start (a resumed run starts its pace afresh), so no burst makes up for
 * the time a run was not running.
 */
export class Pace {
  readonly #perEventMs: number;
  readonly #clock: PaceClock;
  #startedAt: number | undefined;
  #taken = 0;

  constructor(ratePerSecond: number, clock: PaceClock = realClock) {
    this.#perEventMs = 1_000 / ratePerSecond;
    this.#clock = clock;
  }

  /** Waits until the next `count` events may go, and counts them as gone. */
  async take(count: number): Promise<void> {
    this.#startedAt ??= this.#clock.now();
    const dueAt = this.#startedAt + this.#taken * this.#perEventMs;
    // A timer keeps whole milliseconds of a loop time read before it was set, so it may fire a
    // fraction of a millisecond before `dueAt` on this finer clock: wait again for the rest.
    for (let waitMs = dueAt - this.#clock.now(); waitMs > 0; waitMs = dueAt - this.#clock.now()) {
      await this.#clock.wait(waitMs);
    }
    this.#taken += count;
  }

  /** Milliseconds since the first `take`, on the pace's own clock (0 before it). */
  elapsedMs(): number {
    return this.#startedAt === undefined ? 0 : this.#clock.now() - this.#startedAt;
  }
}
