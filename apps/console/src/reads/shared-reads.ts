/** The most views kept at once (one per filter asked): past it the oldest is dropped. */
const VIEWS_KEPT = 64;

interface Entry {
  readonly value: Promise<unknown>;
  /** performance.now() when the read ended; undefined while it runs. */
  endedAt: number | undefined;
}

/**
 * A view's reads, shared by every tab and kept for the refresh period: ten tabs refreshing every 5 s
 * cost the database one read of each view shown per period, not ten. Single flight: a request that
 * comes while the same view is being read waits for that read instead of sending its own. A failed
 * read is not kept (its waiters share its error; the next request reads again). An action forgets
 * all (forget): the page after it shows what it did.
 */
export class SharedReads {
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly freshMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** `key`'s value: the read in flight, or the last one while fresh, else `read()` (then kept). */
  read<T>(key: string, read: () => Promise<T>): Promise<T> {
    const kept = this.#entries.get(key);
    if (kept !== undefined && (kept.endedAt === undefined || this.now() - kept.endedAt < this.freshMs)) {
      return kept.value as Promise<T>;
    }
    const value = read();
    const entry: Entry = { value, endedAt: undefined };
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    const oldest = this.#entries.keys().next().value;
    if (this.#entries.size > VIEWS_KEPT && oldest !== undefined) this.#entries.delete(oldest);
    value.then(
      () => {
        entry.endedAt = this.now();
      },
      () => {
        if (this.#entries.get(key) === entry) this.#entries.delete(key);
      },
    );
    return value;
  }

  /** Drops every kept view: the next request of each reads again. */
  forget(): void {
    this.#entries.clear();
  }
}
