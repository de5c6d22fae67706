import type { EventEmitter } from "node:events";
import { performance } from "node:perf_hooks";
import { Deadline } from "@outbox/client";
import {
  backoffMs,
  type Capacity,
  connectionFailureIn,
  type DrainDeadline,
  type Logger,
  type LoopWatch,
  sleep,
  untilAborted,
} from "@outbox/shared";
import { type ClaimedBatch, publishBatch } from "./batch.js";
import type { RelayMetrics } from "./metrics.js";
import type { OutboxStore } from "./outbox-store.js";
import type { RelayEvents } from "./relay.js";
import type { relayOptionValues } from "./relay-options.js";
import type { OutageBackoff } from "./sns/outage-backoff.js";
import type { ChunkPublisher } from "./sns/publish-chunk.js";
import type { TopicLimits } from "./sns/topic-limits.js";
import type { Wakeup } from "./wake-on-insert.js";

/** Every option of `createRelay`, checked, or its default. */
export type RelaySettings = ReturnType<typeof relayOptionValues>;

/** What a relay's loop and its batches work with: one per relay, made by `createRelay`. */
export interface RelayContext {
  readonly settings: RelaySettings;
  readonly store: OutboxStore;
  /** Sends a chunk as one PublishBatch request and sorts its answer. */
  readonly sns: ChunkPublisher;
  /** Per topic, the message-size limit. */
  readonly limits: TopicLimits;
  /** Per topic, how long whole-request failures keep it waiting. */
  readonly outage: OutageBackoff;
  /**
   * The publish capacity, shared by every batch in flight: RELAY_PUBLISH_CONCURRENCY chunks sent and
   * not yet marked between them.
   */
  readonly capacity: Capacity;
  /** The drain's deadline, which every batch's deadline hangs from. */
  readonly drain: DrainDeadline;
  /** Watches the claims: `stalled()` when one runs past its bound. */
  readonly claims: LoopWatch;
  readonly metrics: RelayMetrics;
  readonly events: EventEmitter<RelayEvents>;
  readonly log?: Logger;
  /** The topic ARN of the `topic` column's value; `undefined` when nothing is configured for it. */
  resolveTopic(topic: string): string | undefined;
}

/** The steps the loop runs: `relaySteps` (below) on the database and the bus, scripted ones in its test. */
export interface LoopSteps {
  /** Claims one batch (leasing its rows to this relay). */
  claim(): Promise<ClaimedBatch>;
  /**
   * Publishes and marks a claimed batch; rejects when the batch failed (database unreachable, …).
   * Calls `handedOver` once it has no row left to send, when the next batch may start beside it.
   */
  publish(batch: ClaimedBatch, handedOver: () => void): Promise<void>;
  /** Releases a batch that was never started (`locked_until = NULL`), for any relay at once. */
  release(batch: ClaimedBatch): Promise<void>;
  /**
   * Blocks until an insert notification or `ms` (the poll interval; the relay sleeps less when a
   * scheduled row is due sooner), after a claim that left nothing waiting.
   */
  wait(ms: number, signal: AbortSignal): Promise<void>;
  /** A claim, a batch or a release failed; the loop backs off before it claims again. */
  failed(error: unknown, consecutiveErrors: number): void;
  /** A round worked end to end after `failures` failed in a row (the database is back, say). */
  recovered(failures: number): void;
}

export interface RunningLoop {
  /** Resolves once `stopping` has aborted and every batch held was published or released. */
  readonly done: Promise<void>;
  /** Rows claimed by batches not finished yet: what a forced exit would leave leased. */
  leasedRows(): number;
}

/** The loop's steps on the relay's store, batches and bus; `wakeup` ends an idle wait at an insert. */
export function relaySteps(relay: RelayContext, wakeup: Wakeup): LoopSteps {
  const { store, claims, events, log } = relay;
  /**
   * How long an idle relay sleeps: until the earliest scheduled row is due, or `pollMs`, whichever is
   * sooner — not a poll at the scheduled rows. An insert notification still ends the sleep, so a row
   * enqueued due sooner than that is seen then: the claim finds nothing due, and this is asked again.
   */
  const idleWaitMs = async (pollMs: number): Promise<number> => {
    try {
      const dueInMs = await store.msUntilNextDue();
      return dueInMs === undefined ? pollMs : Math.min(pollMs, Math.max(dueInMs, 1));
    } catch (error) {
      // The database is not answering: the next claim fails and says so. Poll meanwhile.
      log?.debug({ err: error }, "next scheduled due time unknown; waiting the poll interval");
      return pollMs;
    }
  };
  return {
    async claim() {
      const claimedAt = performance.now();
      const rows = await claims.step(() => store.claim());
      return { rows, claimedAt };
    },
    async publish(batch, handedOver) {
      const report = await publishBatch(relay, batch, handedOver);
      const level = report.failed > 0 || report.released > 0 ? "warn" : "debug";
      log?.[level]({ ...report, durationMs: Math.round(report.durationMs) }, "batch");
      events.emit("batch", report);
    },
    async release(batch) {
      await store.release(batch.rows.map((row) => row.id));
      log?.info({ released: batch.rows.length }, "batch claimed ahead released unsent");
    },
    async wait(ms, signal) {
      // A stop must not wait on the probe (a database that does not answer holds it up to a
      // query's client-side bound): it ends the sleep before the sleep begins.
      const sleepMs = Deadline.after(ms, signal);
      try {
        const waitMs = await untilAborted(idleWaitMs(ms), sleepMs).catch(() => 0);
        if (!signal.aborted) await wakeup.wait(waitMs, signal);
      } finally {
        sleepMs.dispose();
      }
    },
    failed(error, consecutiveErrors) {
      // A database outage fails every round until it ends: the first failure says so, the ones
      // in a row after it only at debug, and the round that works again says how many there were.
      const level = consecutiveErrors === 1 ? "error" : "debug";
      log?.[level](
        { err: error, consecutiveErrors },
        "batch failed; rows stay leased until their lease ends",
      );
      events.emit("batchFailed", error);
    },
    recovered(failures) {
      log?.info({ failedInARow: failures }, "batches working again");
    },
  };
}

/** The longest wait between retries of a failing batch: how late a recovered bus is noticed. */
const BATCH_FAILURE_MAX_MS = 30_000;
/**
 * The longest wait after a lost database connection. The next claim is the probe: a database that
 * answers again is noticed within about a second, as the consumer's probe notices it, at the same
 * cost (one connection attempt a second); a 30 s backoff would leave the backlog waiting that long
 * after a failover.
 */
const DATABASE_LOST_MAX_MS = 1_000;

/** How long the loop waits before claiming again after `consecutiveErrors` failures, `latest` last. */
export function failureWaitMs(consecutiveErrors: number, latest: unknown, pollIntervalMs: number): number {
  const maxMs = connectionFailureIn(latest) === undefined ? BATCH_FAILURE_MAX_MS : DATABASE_LOST_MAX_MS;
  return backoffMs(consecutiveErrors, { baseMs: Math.min(pollIntervalMs, maxMs), maxMs });
}
/** The most batches run one by one after claims ahead kept coming back short (doubling from 1). */
const AHEAD_PAUSE_MAX = 64;

/**
 * Claims the next batch while the current one publishes and marks, so the claim's round trip and
 * Postgres's work on it overlap the publishing instead of following it. Up to `pipelineDepth` batches
 * are held: claims run one after the other, and the batches start in claim order, each once the one
 * before it has handed all its rows to the publish capacity (or is done), so the capacity its last
 * requests leave free takes the next batch's rows instead of idling until its tail is answered. Why
 * that keeps every rule of the serial loop:
 * - Per-key order: a batch's rows stay leased until they are marked (or backed off, or released), and
 *   the claim takes no key whose oldest pending row is leased by a live relay — ours included. So a
 *   batch claimed ahead holds no key that a batch before it still holds; it only gets a key's later
 *   rows once the earlier ones are published, and two batches streaming side by side share no key.
 * - Leases: a batch claimed ahead spends part of its lease waiting; `publishBatch` counts the lease from
 *   the claim, so it still stops starting chunks before the lease could end. Rows sit claimed no longer
 *   than the lease allows, as before.
 * - Re-sends after SIGKILL: the batches publishing share the relay's publish capacity (Capacity), at most
 *   RELAY_PUBLISH_CONCURRENCY chunks sent and not yet marked between them; the batches not started
 *   have sent nothing, and their rows come back when their lease ends. The bound is the same as
 *   without the overlap.
 * - Stop: once `stopping` aborts nothing more is claimed; the batches started finish (under the drain),
 *   and the batches not started, which have sent nothing, are released at once — not started, and not
 *   left waiting for the batches in flight, so another relay can take them while this one drains, and
 *   no statement of theirs is left for after the drain deadline.
 * - After a failure, a batch that started before it sends nothing more if a mark failed (batch.ts);
 *   a batch not started yet is released.
 * A claim ahead can only take keys the batches in flight do not hold. When the backlog is made of those
 * keys (a few keys, or one), it walks the whole pending backlog and comes back short, and the batch
 * after it waits for that scan: a claim ahead that came back short pauses claiming ahead for 1, 2, 4, …
 * (at most AHEAD_PAUSE_MAX) batches, and one that came back full ends the pause.
 */
export function runLoop(
  settings: Pick<RelaySettings, "pipelineDepth" | "batchSize" | "pollIntervalMs">,
  steps: LoopSteps,
  stopping: AbortSignal,
): RunningLoop {
  /** One promise per batch claimed and not finished; each resolves (never rejects) when it is done. */
  const held = new Set<Promise<void>>();
  let leased = 0;
  /** Resolves once the last batch taken has handed all its rows over: the next one starts then. */
  let tail: Promise<void> = Promise.resolve();
  let consecutiveErrors = 0;
  /** Failures so far: a batch claimed before the latest one is released, not started. */
  let failures = 0;
  let latestFailure: unknown;

  const stopped = new Promise<void>((resolve) => {
    if (stopping.aborted) resolve();
    else stopping.addEventListener("abort", () => resolve(), { once: true });
  });

  const succeeded = () => {
    if (consecutiveErrors > 0) steps.recovered(consecutiveErrors);
    consecutiveErrors = 0;
  };

  const fail = (error: unknown) => {
    consecutiveErrors += 1;
    failures += 1;
    latestFailure = error;
    steps.failed(error, consecutiveErrors);
  };

  const take = (batch: ClaimedBatch) => {
    const failuresAtClaim = failures;
    leased += batch.rows.length;
    let handedOver = () => {};
    const allSent = new Promise<void>((resolve) => {
      handedOver = resolve;
    });
    // Its turn comes when the batch before it has handed its rows over, or at once on stop (then it
    // is released).
    const done: Promise<void> = Promise.race([tail, stopped]).then(async () => {
      try {
        // After a failure (a mark that did not commit, the database gone), every chunk sent would be one
        // the table may not show as published, to be sent again: the batches claimed before it send
        // nothing. On stop, a batch that has not started has sent nothing either: let it go at once.
        if (stopping.aborted || failures > failuresAtClaim) await steps.release(batch);
        else {
          await steps.publish(batch, handedOver);
          succeeded();
        }
      } catch (error) {
        fail(error);
      } finally {
        handedOver();
        leased -= batch.rows.length;
        held.delete(done);
      }
    });
    tail = allSent;
    held.add(done);
  };

  const run = async () => {
    let failuresSeen = 0;
    /** Batches left to run one by one, and the pause the next short claim ahead starts. */
    let aheadPause = 0;
    let nextAheadPause = 1;
    while (!stopping.aborted) {
      if (failures > failuresSeen) {
        failuresSeen = failures;
        await sleep(failureWaitMs(consecutiveErrors, latestFailure, settings.pollIntervalMs), stopping);
        continue;
      }
      if (held.size >= (aheadPause > 0 ? 1 : settings.pipelineDepth)) {
        await Promise.race(held);
        continue;
      }
      const overlapped = held.size > 0;
      if (!overlapped && aheadPause > 0) aheadPause -= 1;
      let batch: ClaimedBatch;
      try {
        batch = await steps.claim();
      } catch (error) {
        fail(error);
        continue;
      }
      if (batch.rows.length > 0) take(batch);
      // An empty claim with no batch in flight is a round that worked end to end, as it was before.
      else if (!overlapped) succeeded();
      const full = batch.rows.length >= settings.batchSize;
      if (overlapped && full) nextAheadPause = 1;
      if (overlapped && !full) {
        aheadPause = nextAheadPause;
        nextAheadPause = Math.min(nextAheadPause * 2, AHEAD_PAUSE_MAX);
      }
      // A full batch means more may be waiting: claim (ahead) again at once.
      if (full) continue;
      // Not full: the backlog is taken, or what is left is held back by the keys of our own batches in
      // flight. Those rows become claimable as the batches finish, and no notification will say so:
      // finish them, and claim again without sleeping if this claim overlapped one of them.
      await Promise.all(held);
      if (!overlapped && failures === failuresSeen) await steps.wait(settings.pollIntervalMs, stopping);
    }
    await Promise.all(held);
  };

  return { done: run(), leasedRows: () => leased };
}
