import { performance } from "node:perf_hooks";
import { backoffMs, type Logger, sleep } from "@outbox/shared";
import type { ConsumerMetrics, MessageResult } from "../metrics.js";
import type { IntakeGate } from "./intake-gate.js";

export interface KillSwitchSettings {
  /** Percentage of failed messages in the window that trips it; 0 turns it off. */
  readonly tripPercent: number;
  /** Messages the window must have seen before it may trip: a few failures prove nothing. */
  readonly activityThreshold: number;
  readonly windowMs: number;
  /** The first pause; each trip of a trial message doubles it (with jitter), up to `restartMaxMs`. */
  readonly restartMs: number;
  readonly restartMaxMs: number;
}

export interface KillSwitchOptions extends KillSwitchSettings {
  readonly gate: IntakeGate;
  /** Aborts when intake stops: a pause ends with it. */
  readonly stopping: AbortSignal;
  readonly log: Logger;
  readonly metrics: ConsumerMetrics;
}

/** The window is kept as this many buckets, each a slice of it: a bounded cost at any message rate. */
const BUCKETS = 10;

interface Bucket {
  start: number;
  messages: number;
  failed: number;
}

/** What the trips were, for the `drained` line. */
export interface KillSwitchCounts {
  readonly killSwitchTrips: number;
  readonly killSwitchPausedMs: number;
}

/**
 * MassTransit's kill switch, for what a handler needs beyond the database (a payment API, a
 * downstream service): when the share of failed messages over the recent window passes the trip
 * threshold, intake pauses for the restart timeout instead of receiving messages only to fail them,
 * each failure spending one of the message's receives. When the pause is over, one message is tried
 * (IntakeGate's trial) before intake opens: handled, intake resumes with a fresh window; failed, the
 * switch trips again with a longer pause. A dependency down for minutes so costs one receive of one
 * message per pause, not a full intake's. Messages in hand finish as they would; poison and
 * released messages say nothing about a dependency and are not counted.
 */
export class KillSwitch {
  readonly #options: KillSwitchOptions;
  readonly #buckets: Bucket[] = [];
  /** Counting (closed), holding intake (paused), or waiting for the trial message's outcome. */
  #state: "counting" | "paused" | "trial" = "counting";
  /** Trips since intake last resumed: the exponent of the pause. */
  #consecutive = 0;
  #trips = 0;
  #pausedMs = 0;
  #pausedSince = 0;

  constructor(options: KillSwitchOptions) {
    this.#options = options;
  }

  /** One message ended. */
  record(result: MessageResult): void {
    if (this.#options.tripPercent === 0 || this.#state === "paused") return;
    const judged = result !== "poison" && result !== "released";
    if (this.#state === "trial") {
      if (!judged) this.#options.gate.returnTrial();
      else if (result === "failed") this.#trip(performance.now(), { failed: 1, messages: 1 });
      else this.#resume();
      return;
    }
    if (!judged) return;
    const now = performance.now();
    const bucket = this.#bucketAt(now);
    bucket.messages += 1;
    if (result === "failed") bucket.failed += 1;
    const seen = this.#seen();
    const { tripPercent, activityThreshold } = this.#options;
    if (seen.messages >= activityThreshold && seen.failed * 100 >= tripPercent * seen.messages) {
      this.#trip(now, seen);
    }
  }

  /**
   * While a trial message is out: the longest the pause its failure would start can be, in seconds.
   * Its retry waits that long, so the next trial tries another message.
   */
  retryFloorSeconds(): number {
    if (this.#state !== "trial") return 0;
    const { restartMs, restartMaxMs } = this.#options;
    const nextPauseMs = backoffMs(
      this.#consecutive + 1,
      { baseMs: restartMs, maxMs: restartMaxMs },
      {
        jitter: "none",
      },
    );
    return Math.ceil(nextPauseMs / 1_000);
  }

  counts(): KillSwitchCounts {
    const current = this.#state === "counting" ? 0 : performance.now() - this.#pausedSince;
    return { killSwitchTrips: this.#trips, killSwitchPausedMs: Math.round(this.#pausedMs + current) };
  }

  #seen(): { failed: number; messages: number } {
    let messages = 0;
    let failed = 0;
    for (const bucket of this.#buckets) {
      messages += bucket.messages;
      failed += bucket.failed;
    }
    return { failed, messages };
  }

  #trip(now: number, seen: { failed: number; messages: number }): void {
    const { gate, log, metrics, restartMs, restartMaxMs, windowMs } = this.#options;
    if (this.#state === "counting") this.#pausedSince = now;
    this.#state = "paused";
    this.#trips += 1;
    this.#consecutive += 1;
    const pauseMs = backoffMs(this.#consecutive, { baseMs: restartMs, maxMs: restartMaxMs });
    gate.close("kill switch");
    metrics.killSwitchTripped.set(1);
    log.warn(
      { ...seen, windowMs, pauseMs, trip: this.#consecutive },
      "handlers failing: intake paused (kill switch)",
    );
    void this.#offerTrialAfter(pauseMs);
  }

  async #offerTrialAfter(pauseMs: number): Promise<void> {
    await sleep(pauseMs, this.#options.stopping);
    if (this.#options.stopping.aborted) return;
    this.#state = "trial";
    this.#options.gate.offerTrial();
  }

  #resume(): void {
    const { gate, log, metrics } = this.#options;
    const pausedMs = Math.round(performance.now() - this.#pausedSince);
    this.#pausedMs += pausedMs;
    this.#buckets.length = 0;
    this.#state = "counting";
    this.#consecutive = 0;
    metrics.killSwitchTripped.set(0);
    gate.open("kill switch");
    log.info({ pausedMs, trips: this.#trips }, "kill switch: intake resumed");
  }

  /** The bucket `now` falls in, the window's older buckets dropped. */
  #bucketAt(now: number): Bucket {
    const sliceMs = this.#options.windowMs / BUCKETS;
    while (this.#buckets.length > 0 && (this.#buckets[0]?.start ?? now) <= now - this.#options.windowMs) {
      this.#buckets.shift();
    }
    const last = this.#buckets.at(-1);
    if (last !== undefined && now - last.start < sliceMs) return last;
    const bucket = { start: now, messages: 0, failed: 0 };
    this.#buckets.push(bucket);
    return bucket;
  }
}
