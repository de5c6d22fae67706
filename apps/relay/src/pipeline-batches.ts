import { backoffMs, connectionFailureIn, sleep } from "@outbox/shared";
import type { ClaimedBatch } from "./process-batch.js";

export interface PipelineSettings {
  /** Batches held at once: the one publishing and `pipelineDepth - 1` claimed ahead of it (1: no overlap). */
  readonly pipelineDepth: number;
  readonly batchSize: number;
  readonly pollIntervalMs: number;
}

/** What the pipeline runs; the relay wires them to the database, the bus and its logs. */
export interface PipelineStages {
  /** Claims one batch (leasing its rows to this relay). */
  claim(): Promise<ClaimedBatch>;
  /**
   * Publishes and marks a claimed batch; rejects when the batch failed (database unreachable, …).
   * Calls `handedOver` once it has no row left to send, when the next batch may start beside it.
   */
  process(batch: ClaimedBatch, handedOver: () => void): Promise<void>;
  /** Gives a batch that was never started back unsent (`locked_until = NULL`), for any relay at once. */
  release(batch: ClaimedBatch): Promise<void>;
  /**
   * Blocks until an insert notification or `ms` (the poll interval; the relay sleeps less when a
   * scheduled row is due sooner), after a claim that left nothing waiting.
   */
  wait(ms: number, signal: AbortSignal): Promise<void>;
  /** A claim, a batch or a release failed; the pipeline backs off before it claims again. */
  failed(error: unknown, consecutiveErrors: number): void;
  /** A round worked end to end after `failures` failed in a row (the database is back, say). */
  recovered(failures: number): void;
}

export interface BatchPipeline {
  /** Settles once `stopping` has aborted and every batch held was published or released. */
  readonly done: Promise<void>;
  /** Rows claimed by batches not finished yet: what a forced exit would leave leased. */
  leasedRows(): number;
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

/** How long the pipeline waits before claiming again after `consecutiveErrors` failures, `latest` last. */
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
 * before it has handed all its rows to the publish lanes (or is done), so the lanes its last requests
 * leave free take the next batch's rows instead of idling until its tail is answered. Why that keeps
 * every rule of the serial loop:
 * - Per-key order: a batch's rows stay leased until they are marked (or backed off, or released), and
 *   the claim takes no key whose oldest pending row is leased by a live relay — ours included. So a
 *   batch claimed ahead holds no key that a batch before it still holds; it only gets a key's later
 *   rows once the earlier ones are published, and two batches streaming side by side share no key.
 * - Leases: a batch claimed ahead spends part of its lease waiting; `processBatch` counts the lease from
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
 * - After a failure, a batch that started before it sends nothing more if a mark failed (sendChunk);
 *   a batch not started yet is released.
 * A claim ahead can only take keys the batches in flight do not hold. When the backlog is made of those
 * keys (a few keys, or one), it walks the whole pending backlog and comes back short, and the batch
 * after it waits for that scan: a claim ahead that came back short pauses claiming ahead for 1, 2, 4, …
 * (at most AHEAD_PAUSE_MAX) batches, and one that came back full ends the pause.
 */
export function pipelineBatches(
  settings: PipelineSettings,
  stages: PipelineStages,
  stopping: AbortSignal,
): BatchPipeline {
  /** One promise per batch claimed and not finished; each settles (never rejects) when it is done. */
  const held = new Set<Promise<void>>();
  let leased = 0;
  /** Settles once the last batch taken has handed all its rows over: the next one starts then. */
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
    if (consecutiveErrors > 0) stages.recovered(consecutiveErrors);
    consecutiveErrors = 0;
  };

  const fail = (error: unknown) => {
    consecutiveErrors += 1;
    failures += 1;
    latestFailure = error;
    stages.failed(error, consecutiveErrors);
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
        if (stopping.aborted || failures > failuresAtClaim) await stages.release(batch);
        else {
          await stages.process(batch, handedOver);
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
        batch = await stages.claim();
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
      if (!overlapped && failures === failuresSeen) await stages.wait(settings.pollIntervalMs, stopping);
    }
    await Promise.all(held);
  };

  return { done: run(), leasedRows: () => leased };
}
