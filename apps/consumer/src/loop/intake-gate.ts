/** Why intake is paused: what every message needs is down, so receiving would only spend attempts. */
export type PauseReason = "database unreachable" | "kill switch";

/** What a poller may do: receive as usual, receive one message as the kill switch's trial, or stop. */
export type Admission = "open" | "trial" | "stopped";

/**
 * Whether the pollers may receive. Closed while the database is unreachable (DatabaseOutage) or the
 * handlers fail too often (KillSwitch), each opening it again when its cause is over; open when
 * nothing holds it. The kill switch, before it opens, offers a trial: one poller may receive one
 * message, whose outcome says whether the handlers' dependency is back, at the cost of one receive
 * of one message rather than of every message a full intake would take.
 */
export class IntakeGate {
  readonly #closedBy = new Set<PauseReason>();
  #trial: "offered" | "taken" | undefined;
  #changed: Promise<void> = Promise.resolve();
  #wake: () => void = () => {};

  constructor() {
    this.#rearm();
  }

  get isOpen(): boolean {
    return this.#closedBy.size === 0;
  }

  /** What holds intake now, for /readyz and the logs; empty while open. */
  pausedBy(): PauseReason[] {
    return [...this.#closedBy];
  }

  close(reason: PauseReason): void {
    this.#closedBy.add(reason);
    if (reason === "kill switch") this.#trial = undefined;
  }

  open(reason: PauseReason): void {
    if (reason === "kill switch") this.#trial = undefined;
    if (this.#closedBy.delete(reason)) this.#changedNow();
  }

  /** The kill switch holds intake but for one receive of one message (taken by `admit`). */
  offerTrial(): void {
    this.#trial = "offered";
    this.#changedNow();
  }

  /** The trial brought no message to judge by (an empty receive, a failed one, poison): offered again. */
  returnTrial(): void {
    if (this.#trial !== "taken") return;
    this.#trial = "offered";
    this.#changedNow();
  }

  /** Waits until a poller may receive: as usual, or the trial's one message; "stopped" once `signal` aborts. */
  async admit(signal: AbortSignal): Promise<Admission> {
    for (;;) {
      if (signal.aborted) return "stopped";
      if (this.isOpen) return "open";
      // Only the kill switch holds intake: while the database is away, a trial would prove nothing.
      if (this.#trial === "offered" && this.#closedBy.size === 1 && this.#closedBy.has("kill switch")) {
        this.#trial = "taken";
        return "trial";
      }
      await this.#nextChange(signal);
    }
  }

  #changedNow(): void {
    this.#wake();
    this.#rearm();
  }

  #rearm(): void {
    this.#changed = new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  async #nextChange(signal: AbortSignal): Promise<void> {
    let onAbort = () => {};
    const aborted = new Promise<void>((resolve) => {
      onAbort = () => resolve();
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await Promise.race([this.#changed, aborted]);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }
}
