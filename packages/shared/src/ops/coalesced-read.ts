/** How long a gauge's read is shared after it settles: the gauges of one scrape and scrapes arriving together. */
export const SCRAPE_HOLD_MS = 100;

/**
 * A read that concurrent callers share: the first call starts it, every call until it settles (and
 * for `holdMs` after) gets the same promise, so a burst of scrapes costs one query, not one each.
 * What the relay's backlog gauges do for their query; a gauge of the table's truth reads through it.
 */
export function coalescedRead<T>(read: () => Promise<T>, holdMs: number): () => Promise<T> {
  let shared: Promise<T> | undefined;
  return () => {
    shared ??= read().finally(() => {
      // Shared by the gauges of one scrape and by scrapes arriving together, never kept for long.
      setTimeout(() => {
        shared = undefined;
      }, holdMs).unref();
    });
    return shared;
  };
}
