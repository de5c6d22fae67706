import { Deadline } from "@outbox/client";

/**
 * The waits a stop is made of, all bounded by the one stop currency, the client's `Deadline`
 * (docs/architecture.md, "One stop currency"). None leaves a timer or a listener behind.
 */

/**
 * Waits for `work` until `deadline` aborts; resolves false when the deadline came first (at once if
 * it already had). `work` goes on unwatched: for a stop that must end inside its budget even when a
 * query hangs.
 */
export async function settlesBefore(work: Promise<unknown>, deadline: Deadline): Promise<boolean> {
  if (deadline.aborted) return false;
  let unlink = () => {};
  const aborted = new Promise<false>((resolve) => {
    unlink = deadline.onAbort(() => resolve(false));
  });
  try {
    return await Promise.race([work.then(() => true as const), aborted]);
  } finally {
    unlink();
  }
}

/** `settlesBefore` a deadline `ms` from now. */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  const deadline = Deadline.after(ms);
  try {
    return await settlesBefore(work, deadline);
  } finally {
    deadline.dispose();
  }
}

/**
 * Settles with `work`, or rejects with the deadline's reason as soon as it aborts. For work that
 * cannot be stopped from outside (a handler, an SDK call between its retries): the caller stops
 * waiting, and `work` must not be able to do harm after that (its transaction is rolled back, its
 * request aborted by the same deadline's signal).
 */
export function untilAborted<T>(work: Promise<T>, deadline: Deadline): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const unlink = deadline.onAbort(reject);
    work.then(resolve, reject).finally(unlink);
  });
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
