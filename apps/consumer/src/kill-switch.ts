import { performance } from "node:perf_hooks";
import { backoffMs, type Logger, sleep } from "@outbox/shared";
import type { IntakeGate } from "./intake-gate.js";
import type { ConsumerMetrics, MessageResult } from "./metrics.js";

export interface KillSwitchSettings {
  /** Percentage of failed messages in the window that trips it; 0 turns it off. */
  readonly tripPercent: number;
  /** Messages the window must have seen before it may trip: a few failures prove nothing. */
  readonly activityThreshold: number;
  readonly windowMs: number;
  /** The first pause; each trip that follows a pause doubles it (with jitter), up to `restartMaxMs`. */
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
 * each failure spending one of the message's receives. After the pause intake resumes with a fresh
 * window; failing on, it trips again, with a longer pause. Messages in hand finish as they would;
 * poison and released messages say nothing about a dependency and are not counted.
 */
export class KillSwitch {
  readonly #options: KillSwitchOptions;
  readonly #buckets: Bucket[] = [];
  #tripped = false;
  /** Trips since the last window that ended without one: the exponent of the pause. */
  #consecutive = 0;
  /** `performance.now()` when intake last resumed after a pause. */
  #resumedAt = Number.NEGATIVE_INFINITY;
  #trips = 0;
  #pausedMs = 0;
  #pausedSince = 0;

  constructor(options: KillSwitchOptions) {
    this.#options = options;
  }

  /** One message ended. */
  record(result: MessageResult): void {
    if (this.#options.tripPercent === 0 || this.#tripped) return;
    if (result === "poison" || result === "released") return;
    const now = performance.now();
    const bucket = this.#bucketAt(now);
    bucket.messages += 1;
    if (result === "failed") bucket.failed += 1;
    else if (now - this.#resumedAt > this.#options.windowMs) this.#consecutive = 0;
    this.#tripIfFailing(now);
  }

  counts(): KillSwitchCounts {
    const current = this.#tripped ? performance.now() - this.#pausedSince : 0;
    return { killSwitchTrips: this.#trips, killSwitchPausedMs: Math.round(this.#pausedMs + current) };
  }

  #tripIfFailing(now: number): void {
    const { tripPercent, activityThreshold } = this.#options;
    let messages = 0;
    let failed = 0;
    for (const bucket of this.#buckets) {
      messages += bucket.messages;
      failed += bucket.failed;
    }
    if (messages < activityThreshold || failed * 100 < tripPercent * messages) return;
    this.#tripped = true;
    this.#trips += 1;
    this.#consecutive += 1;
    this.#pausedSince = now;
    const { gate, log, metrics, restartMs, restartMaxMs, windowMs } = this.#options;
    const pauseMs = backoffMs(this.#consecutive, { baseMs: restartMs, maxMs: restartMaxMs });
    gate.close("kill switch");
    metrics.killSwitchTripped.set(1);
    log.warn(
      { failed, messages, windowMs, pauseMs, trip: this.#consecutive },
      "handlers failing: intake paused (kill switch)",
    );
    void this.#resumeAfter(pauseMs);
  }

  async #resumeAfter(pauseMs: number): Promise<void> {
    const { gate, log, metrics, stopping } = this.#options;
    await sleep(pauseMs, stopping);
    const pausedMs = Math.round(performance.now() - this.#pausedSince);
    this.#pausedMs += pausedMs;
    this.#buckets.length = 0;
    this.#tripped = false;
    this.#resumedAt = performance.now();
    metrics.killSwitchTripped.set(0);
    gate.open("kill switch");
    if (!stopping.aborted) log.info({ pausedMs }, "kill switch: intake resumed");
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
