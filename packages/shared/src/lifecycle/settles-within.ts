/** Waits for `work`, at most `ms`; resolves false on timeout. Leaves no timer behind either way. */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true as const), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits for `work` until `signal` aborts; resolves false when the signal came first (at once if it
 * already had). `work` goes on unwatched: for a stop that must end inside its budget even when a
 * query hangs. Leaves no listener behind either way.
 */
export async function settlesBefore(work: Promise<unknown>, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  let onAbort = () => {};
  const aborted = new Promise<false>((resolve) => {
    onAbort = () => resolve(false);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([work.then(() => true as const), aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
