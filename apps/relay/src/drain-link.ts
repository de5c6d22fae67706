import { Deadline } from "@outbox/client";

/**
 * The drain's Deadline as the relay's batches see it, made with the relay. Every batch's deadline
 * hangs from `deadline`. A batch in flight when the drain begins was made before the drain's
 * Deadline existed, and a Deadline takes its parents when it is made: so this one is made first and
 * `follow` ties it to the drain's, the one late link on the way from SIGTERM to the SDK call.
 */
export class DrainLink {
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

  /** From now on aborts with `drain`; returns the unlink. */
  follow(drain: Deadline): () => void {
    this.#endsAt = drain.expiresAt;
    return this.#link.follow(drain);
  }
}
