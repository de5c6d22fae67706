import { Deadline } from "@outbox/client";

/**
 * The drain's Deadline as the work in flight sees it, made with the daemon. Every batch's (relay)
 * or message's (consumer) deadline hangs from `deadline`. Work in flight when the drain begins was
 * made before the drain's Deadline existed, and a Deadline takes its parents when it is made: so
 * this one is made first and `follow` ties it to the drain's, the one late link on the way from
 * SIGTERM to the SDK call.
 */
export class DrainDeadline {
  readonly #link = Deadline.followingLater();
  /** Aborts when the drain's deadline does; never before a drain began. */
  readonly deadline = this.#link.deadline;
  #endsAt = Number.POSITIVE_INFINITY;

  /**
   * `performance.now()` at which the drain's deadline expires; Infinity until a drain began. A
   * request that could not end by then is not started: one cut at the deadline may already have
   * reached SNS, and its rows would be sent again after the restart.
   */
  get endsAt(): number {
    return this.#endsAt;
  }

  /** The drain's remaining time; Infinity until a drain began. */
  remainingMs(): number {
    return this.#endsAt - performance.now();
  }

  /** From now on aborts with `drain` (with `reason`, when given); returns the unlink. */
  follow(drain: Deadline, reason?: unknown): () => void {
    this.#endsAt = drain.expiresAt;
    return this.#link.follow(drain, reason);
  }
}
