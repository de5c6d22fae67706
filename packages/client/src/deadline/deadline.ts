import { performance } from "node:perf_hooks";
import { onSignalAbort } from "./on-signal-abort.js";

export class DeadlineExceededError extends Error {
  override readonly name = "DeadlineExceededError";
}

/** See {@link Deadline.followingLater}. */
export interface FollowingDeadline {
  readonly deadline: Deadline;
  /** From now on aborts with `other`; returns the unlink. */
  follow(other: Deadline, reason?: unknown): () => void;
}

/**
 * A point in time by which work must be done: a monotonic expiry (immune to wall-clock jumps), an
 * AbortSignal that fires at expiry, and `remainingMs()` to hand the rest of the budget downstream.
 * Call `dispose()` when the work ends so the timer and the parent links go away.
 *
 * The signal is made on first use: a consumer makes a deadline per message, most of which end
 * without anyone asking for it, and an AbortSignal (an EventTarget) costs more to make than the rest
 * of the deadline. Deadlines linked to a deadline, and `onAbort` callbacks, are plain functions in a
 * Set: no EventTarget listener, whose add and remove scan every listener already there.
 */
export class Deadline {
  #timer: NodeJS.Timeout | undefined;
  readonly #unlinks: (() => void)[];
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  #onAbort: Set<(reason: unknown) => void> | undefined;

  private constructor(
    /** `performance.now()` value at which the deadline expires; Infinity: only a parent ends it. */
    readonly expiresAt: number,
    parents: readonly (AbortSignal | Deadline)[],
  ) {
    this.#unlinks = parents.map((parent) => this.#link(parent));
    if (this.#aborted || expiresAt === Number.POSITIVE_INFINITY) return;
    this.#expireAt(Math.max(0, expiresAt - performance.now()));
  }

  /**
   * Aborts once `performance.now()` has reached `expiresAt`, never before: a timer counts on the
   * event loop's clock, whole milliseconds, and fires up to 1 ms early by `performance.now()`
   * (499.998 ms after it was set for 500). One that fires early is set again for the rest.
   */
  #expireAt(inMs: number): void {
    this.#timer = setTimeout(() => {
      const left = this.expiresAt - performance.now();
      if (left > 0) this.#expireAt(left);
      else this.#abort(new DeadlineExceededError("deadline exceeded"));
    }, inMs);
    this.#timer.unref();
  }

  /** A deadline `ms` from now (Infinity: none of its own); aborts early when `parent` aborts. */
  static after(ms: number, parent?: AbortSignal | Deadline): Deadline {
    return new Deadline(performance.now() + ms, parent ? [parent] : []);
  }

  /**
   * A deadline with no expiry of its own that takes one later: work begun before a deadline exists
   * (a batch or a message in flight when a drain begins) hangs from `deadline`, and `follow` ties it
   * to that deadline once there, to abort with it (with `reason`, when given, instead of its reason).
   */
  static followingLater(): FollowingDeadline {
    const deadline = new Deadline(Number.POSITIVE_INFINITY, []);
    return {
      deadline,
      follow: (other, reason) => other.onAbort((otherReason) => deadline.#abort(reason ?? otherReason)),
    };
  }

  /** Aborts at expiry, or with a parent; the reason is a DeadlineExceededError or the parent's. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Aborted: expired (its timer fired) or a parent aborted. */
  get aborted(): boolean {
    return this.#aborted;
  }

  /** Milliseconds left, never negative; 0 once aborted for any reason. */
  remainingMs(): number {
    if (this.#aborted) return 0;
    return Math.max(0, this.expiresAt - performance.now());
  }

  get expired(): boolean {
    return this.remainingMs() <= 0;
  }

  /** The earlier of the two, aborting when either aborts. Dispose it on its own. */
  min(other: Deadline): Deadline {
    return new Deadline(Math.min(this.expiresAt, other.expiresAt), [this, other]);
  }

  /**
   * A deadline that expires `ms` after this one aborts, whatever the cause: the time a step cut off
   * by this deadline still gets to tidy up (a drain's last marks). Dispose it on its own.
   */
  withGrace(ms: number): Deadline {
    const grace = new Deadline(Number.POSITIVE_INFINITY, []);
    const unlink = this.onAbort(() => {
      const timer = setTimeout(() => grace.#abort(new DeadlineExceededError("grace exceeded")), ms);
      timer.unref();
      grace.#unlinks.push(() => clearTimeout(timer));
    });
    grace.#unlinks.push(unlink);
    return grace;
  }

  /** Throws DeadlineExceededError when no time is left. */
  throwIfExpired(): void {
    if (this.expired) throw new DeadlineExceededError("deadline exceeded");
  }

  /**
   * Calls `callback` with the abort reason when the deadline aborts, at once if it already has.
   * Returns the unlink; a cheaper `signal.addEventListener("abort", …)`.
   */
  onAbort(callback: (reason: unknown) => void): () => void {
    if (this.#aborted) {
      callback(this.#reason);
      return () => {};
    }
    this.#onAbort ??= new Set();
    const callbacks = this.#onAbort;
    callbacks.add(callback);
    return () => callbacks.delete(callback);
  }

  dispose(): void {
    clearTimeout(this.#timer);
    for (const unlink of this.#unlinks) unlink();
  }

  #link(parent: AbortSignal | Deadline): () => void {
    const abort = (reason: unknown) => this.#abort(reason);
    // Asked of AbortSignal, the one global class: a parent Deadline may come from another copy of
    // this package (a bundled handlers module's `Deadline.after(ms, context.deadline)`).
    return parent instanceof AbortSignal ? onSignalAbort(parent, abort) : parent.onAbort(abort);
  }

  #abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    clearTimeout(this.#timer);
    this.#controller?.abort(reason);
    const callbacks = this.#onAbort;
    this.#onAbort = undefined;
    for (const callback of callbacks ?? []) callback(reason);
  }
}
