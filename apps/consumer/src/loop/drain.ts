import { Deadline } from "@outbox/client";
import { settlesBefore, settlesWithin } from "@outbox/shared";
import { DrainExpiredError } from "../errors.js";

/** After the drain deadline: time to release what was aborted and flush deletes (taken from the shutdown overhead). */
const AFTER_DEADLINE_GRACE_MS = 1_000;

/**
 * The drain deadline, enforced: once `drain()` starts, no message starts with less than the safety
 * margin left, none runs past the deadline, and when it passes every message still running is
 * rolled back and released.
 *
 * The time is the drain's own Deadline (runDaemon's, or the library default), never a second timer.
 * Every message deadline hangs off `#messagesEnd`, which exists before any drain: a message received
 * long before the stop must be rolled back when the drain expires, with a DrainExpiredError (released
 * at once, not retried later).
 */
export class DrainDeadline {
  readonly #marginMs: number;
  /**
   * The parent of every message deadline: linking to a Deadline is a Set entry, linking to an
   * AbortSignal an EventTarget listener, whose add and remove scan the listeners of every message in flight.
   */
  readonly #messagesEnd = Deadline.followingLater();
  #deadline: Deadline | undefined;
  #unlink: () => void = () => {};

  constructor(marginMs: number) {
    this.#marginMs = marginMs;
  }

  /** Aborts, with a DrainExpiredError, when the drain deadline passes: every message deadline is linked to it. */
  get messagesEnd(): Deadline {
    return this.#messagesEnd.deadline;
  }

  /** During the drain: too little time left to give a message more than the safety margin. */
  tooLateToStart(): boolean {
    return this.#deadline !== undefined && this.#deadline.remainingMs() <= this.#marginMs;
  }

  /** A message's deadline: its handler timeout, cut to what the drain has left. */
  messageDeadline(handlerTimeoutMs: number): Deadline {
    const remaining =
      this.#deadline === undefined
        ? handlerTimeoutMs
        : Math.min(handlerTimeoutMs, this.#deadline.remainingMs());
    return Deadline.after(remaining, this.#messagesEnd.deadline);
  }

  /** The drain begins; `deadline` is its whole budget, and the caller's to dispose. */
  start(deadline: Deadline): void {
    this.#deadline = deadline;
  }

  /**
   * Waits for `finished` until the deadline. Past it, aborts every message deadline and gives
   * `settled` a short grace: a message released now is picked up at once elsewhere, one abandoned
   * would wait for its lease to run out. Resolves whether everything finished in time.
   */
  async finish(finished: Promise<void>, settled: () => Promise<void>): Promise<boolean> {
    const deadline = this.#started();
    // Messages in flight end the moment the deadline passes, not when this wait notices it.
    this.#unlink = this.#messagesEnd.follow(deadline, new DrainExpiredError("drain timed out"));
    const inTime = await settlesBefore(finished, deadline);
    this.#unlink();
    if (!inTime) await settlesWithin(settled(), AFTER_DEADLINE_GRACE_MS);
    return inTime;
  }

  /** Waits for the last deletes: what is left of the deadline, plus the grace. */
  flush(flushed: Promise<void>): Promise<boolean> {
    return settlesWithin(flushed, this.#started().remainingMs() + AFTER_DEADLINE_GRACE_MS);
  }

  end(): void {
    this.#unlink();
  }

  #started(): Deadline {
    if (this.#deadline === undefined) throw new Error("the drain has not started");
    return this.#deadline;
  }
}
