/**
 * A counted semaphore: at most `total` units of work held at once, served in arrival order. The
 * consumer's handler slots are one (reserved before a poll, so a receive never asks SQS for more
 * messages than can start at once); the relay's publish capacity is another (held from a
 * PublishBatch request until its rows are marked, so a hard kill re-sends at most that many).
 */
export class Capacity {
  #free: number;
  readonly #waiters: { min: number; max: number; resolve: (reserved: number) => void }[] = [];

  constructor(total: number) {
    this.#free = total;
  }

  /**
   * Waits until `min` slots are free and reserves up to `max`; resolves 0 when `signal` aborts first
   * (without a signal it waits until the slots are free).
   * A `min` above 1 keeps several pollers from splitting the free slots into receives of one message
   * each: one receive costs about as much CPU for 1 message as for 10.
   */
  reserve(min: number, max: number, signal?: AbortSignal): Promise<number> {
    if (signal?.aborted) return Promise.resolve(0);
    if (this.#free >= min && this.#waiters.length === 0) return Promise.resolve(this.#take(max));
    return new Promise((resolve) => {
      const waiter = {
        min,
        max,
        resolve: (reserved: number) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(reserved);
        },
      };
      const onAbort = () => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        resolve(0);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Gives back `count` slots (unused reservations, or finished work) and wakes the waiters it now satisfies. */
  giveBack(count: number): void {
    this.#free += count;
    for (let head = this.#waiters[0]; head !== undefined && this.#free >= head.min; head = this.#waiters[0]) {
      this.#waiters.shift();
      head.resolve(this.#take(head.max));
    }
  }

  #take(max: number): number {
    const reserved = Math.min(max, this.#free);
    this.#free -= reserved;
    return reserved;
  }
}
