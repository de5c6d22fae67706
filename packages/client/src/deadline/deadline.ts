import { performance } from "node:perf_hooks";
import { forwardAbort } from "./forward-abort.js";

export class DeadlineExceededError extends Error {
  override readonly name = "DeadlineExceededError";
}

/**
 * A point in time by which work must be done: a monotonic expiry (immune to wall-clock jumps), an
 * AbortSignal that fires at expiry, and `remainingMs()` to hand the rest of the budget downstream.
 * Call `dispose()` when the work ends so the timer and the parent links go away.
 */
export class Deadline {
  readonly signal: AbortSignal;
  readonly #timer: NodeJS.Timeout;
  readonly #unlinks: (() => void)[];

  private constructor(
    /** `performance.now()` value at which the deadline expires. */
    readonly expiresAt: number,
    parents: readonly AbortSignal[],
  ) {
    const controller = new AbortController();
    this.signal = controller.signal;
    const remaining = Math.max(0, expiresAt - performance.now());
    this.#timer = setTimeout(
      () => controller.abort(new DeadlineExceededError("deadline exceeded")),
      remaining,
    );
    this.#timer.unref();
    this.#unlinks = parents.map((parent) => forwardAbort(parent, controller));
  }

  /** A deadline `ms` from now; aborts early when `parent` aborts. */
  static after(ms: number, parent?: AbortSignal): Deadline {
    return new Deadline(performance.now() + ms, parent ? [parent] : []);
  }

  /** Milliseconds left, never negative; 0 once aborted for any reason. */
  remainingMs(): number {
    if (this.signal.aborted) return 0;
    return Math.max(0, this.expiresAt - performance.now());
  }

  get expired(): boolean {
    return this.remainingMs() <= 0;
  }

  /** The earlier of the two, aborting when either aborts. Dispose it on its own. */
  min(other: Deadline): Deadline {
    return new Deadline(Math.min(this.expiresAt, other.expiresAt), [this.signal, other.signal]);
  }

  /** Throws DeadlineExceededError when no time is left. */
  throwIfExpired(): void {
    if (this.expired) throw new DeadlineExceededError("deadline exceeded");
  }

  dispose(): void {
    clearTimeout(this.#timer);
    for (const unlink of this.#unlinks) unlink();
  }
}
