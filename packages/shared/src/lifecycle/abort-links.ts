import { forwardAbort } from "@outbox/client";

/**
 * Signal plumbing without `AbortSignal.any` (see `forwardAbort`): every link made here returns its own
 * undo, and callers undo when the work ends.
 */

export class TimeoutError extends Error {
  override readonly name = "TimeoutError";
}

export interface TimedSignal {
  readonly signal: AbortSignal;
  /** Clears the timer (and any links); the signal stays as it is. */
  dispose(): void;
}

/**
 * A signal that aborts after `ms`, optionally also when one of `parents` aborts. Unlike
 * `AbortSignal.timeout`, the timer is cleared by `dispose`, so finished work leaves nothing behind.
 */
export function timedSignal(ms: number, label: string, parents: readonly AbortSignal[] = []): TimedSignal {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new TimeoutError(`${label} timed out after ${ms} ms`)), ms);
  timer.unref();
  const unlinks = parents.map((parent) => forwardAbort(parent, controller));
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      for (const unlink of unlinks) unlink();
    },
  };
}

/** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
