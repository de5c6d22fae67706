/**
 * The relay's publish lanes: at most `count` PublishBatch requests sent and not yet marked, across
 * every batch in flight. A lane is held from the send until the chunk's mark has committed, so a hard
 * kill re-sends at most `count` chunks however many batches stream at once. Waiters are served in
 * arrival order: a batch that asked first is not overtaken by the one claimed after it.
 */
export class PublishLanes {
  #free: number;
  readonly #waiters: (() => void)[] = [];

  constructor(count: number) {
    this.#free = count;
  }

  /** Resolves once a lane is this caller's; `release` gives it back. */
  acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#free += 1;
  }
}
