/** Why intake is paused: what every message needs is down, so receiving would only spend attempts. */
export type PauseReason = "database unreachable" | "kill switch";

/**
 * Whether the pollers may receive. Closed while the database is unreachable (DatabaseOutage) or the
 * handlers fail too often (KillSwitch), each opening it again when its cause is over; open when
 * nothing holds it.
 */
export class IntakeGate {
  readonly #closedBy = new Set<PauseReason>();
  #opened: Promise<void> = Promise.resolve();
  #open: () => void = () => {};

  get isOpen(): boolean {
    return this.#closedBy.size === 0;
  }

  /** What holds intake now, for /readyz and the logs; empty while open. */
  pausedBy(): PauseReason[] {
    return [...this.#closedBy];
  }

  close(reason: PauseReason): void {
    if (this.isOpen) {
      this.#opened = new Promise((resolve) => {
        this.#open = resolve;
      });
    }
    this.#closedBy.add(reason);
  }

  open(reason: PauseReason): void {
    if (!this.#closedBy.delete(reason) || !this.isOpen) return;
    this.#open();
  }

  /** Resolves once the gate is open, or at once when `signal` aborts. */
  async whenOpen(signal: AbortSignal): Promise<void> {
    if (this.isOpen || signal.aborted) return;
    let onAbort = () => {};
    const aborted = new Promise<void>((resolve) => {
      onAbort = () => resolve();
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await Promise.race([this.#opened, aborted]);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }
}
