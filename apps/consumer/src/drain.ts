import { Deadline } from "@outbox/client";
import { settlesWithin } from "@outbox/shared";
import { DrainExpiredError } from "./errors.js";

/** After the drain deadline: time to release what was aborted and flush deletes (taken from the shutdown overhead). */
const AFTER_DEADLINE_GRACE_MS = 1_000;

/**
 * The drain deadline, enforced: once `drain()` starts, no message starts with less than the safety
 * margin left, none runs past the deadline, and when it passes every message still running is
 * rolled back and released.
 */
export class DrainDeadline {
  readonly #marginMs: number;
  readonly #expired = new AbortController();
  /**
   * The parent of every message deadline: linking to a Deadline is a Set entry, linking to the
   * signal an EventTarget listener, whose add and remove scan the listeners of every message in flight.
   */
  readonly #expiry = Deadline.after(Number.POSITIVE_INFINITY, this.#expired.signal);
  #budget: Deadline | undefined;

  constructor(marginMs: number) {
    this.#marginMs = marginMs;
  }

  /** Aborts when the drain deadline passes: every message deadline is linked to it. */
  get expired(): AbortSignal {
    return this.#expired.signal;
  }

  /** During the drain: too little time left to give a message more than the safety margin. */
  tooLateToStart(): boolean {
    return this.#budget !== undefined && this.#budget.remainingMs() <= this.#marginMs;
  }

  /** A message's deadline: its handler timeout, cut to what the drain has left. */
  messageDeadline(handlerTimeoutMs: number): Deadline {
    const remaining =
      this.#budget === undefined ? handlerTimeoutMs : Math.min(handlerTimeoutMs, this.#budget.remainingMs());
    return Deadline.after(remaining, this.#expiry);
  }

  /** Starts the clock: `timeoutMs` from now, or sooner if `deadline` aborts first. */
  start(timeoutMs: number, deadline: AbortSignal | undefined): void {
    this.#budget = Deadline.after(timeoutMs, deadline);
  }

  /**
   * Waits for `finished` until the deadline. Past it, aborts every message deadline and gives
   * `settled` a short grace: a message released now is picked up at once elsewhere, one abandoned
   * would wait for its lease to run out. Resolves whether everything finished in time.
   */
  async finish(finished: Promise<void>, settled: () => Promise<void>): Promise<boolean> {
    const inTime = await settlesWithin(finished, this.#remainingMs());
    if (!inTime) {
      this.#expired.abort(new DrainExpiredError("drain timed out"));
      await settlesWithin(settled(), AFTER_DEADLINE_GRACE_MS);
    }
    return inTime;
  }

  /** Waits for the last deletes: what is left of the deadline, plus the grace. */
  flush(flushed: Promise<void>): Promise<boolean> {
    return settlesWithin(flushed, this.#remainingMs() + AFTER_DEADLINE_GRACE_MS);
  }

  end(): void {
    this.#budget?.dispose();
  }

  #remainingMs(): number {
    return this.#budget?.remainingMs() ?? 0;
  }
}
