/**
 * Signal plumbing without `AbortSignal.any`: on Node 20 it keeps a listener on a long-lived parent for
 * every child ever made (nodejs/node#55351), so a daemon that links one signal per message leaks.
 * Every link made here returns its own undo, and callers undo when the work ends.
 */

/** Aborts `child` when `parent` aborts. Returns the unlink function. */
export function forwardAbort(parent: AbortSignal, child: AbortController): () => void {
  if (parent.aborted) {
    child.abort(parent.reason);
    return () => {};
  }
  const onAbort = () => child.abort(parent.reason);
  parent.addEventListener("abort", onAbort, { once: true });
  return () => parent.removeEventListener("abort", onAbort);
}

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
