import { EventEmitter } from "node:events";
import { performance } from "node:perf_hooks";
import { Deadline } from "@outbox/client";
import { Capacity, DrainDeadline, LoopWatch, settlesBefore, untilAborted } from "@outbox/shared";
import { sql } from "kysely";
import { Registry } from "prom-client";
import { type ClaimedRow, claimBatch } from "./claim-batch.js";
import type { BatchReport } from "./commit-batch.js";
import { createPublishedMarker, releaseRows } from "./mark-results.js";
import { createRelayMetrics } from "./metrics.js";
import { OutageBackoff } from "./outage-backoff.js";
import { pipelineBatches } from "./pipeline-batches.js";
import { processBatch } from "./process-batch.js";
import { createChunkPublisher } from "./publish-chunk.js";
import { type RelayOptions, relayOptionValues } from "./relay-options.js";
import { startRetention } from "./retention.js";
import { msUntilNextDue } from "./scheduled-rows.js";
import { TopicLimits } from "./topic-limits.js";
import { wakeOnInsert } from "./wake-on-insert.js";

/** What one run did, and what it left: the fields of the daemon's `drained` line. */
export interface RelaySummary {
  readonly [field: string]: string | number | boolean;
  /** The drain deadline did not cut the batch in flight short. */
  readonly clean: boolean;
  /** Events this relay published since it started. */
  readonly published: number;
  /** Rows still neither published nor dead in the table (all relays), counted at the end; -1 if unknown. */
  readonly unsent: number;
  /** Rows this relay marked dead since it started. */
  readonly dead: number;
}

export interface RelayEvents {
  /** After every non-empty batch. */
  batch: [report: BatchReport];
  /** A row was marked dead, with the reason. */
  dead: [event: { id: string; topic: string; reason: string }];
  /** A batch failed (database unreachable, …); the relay waits and carries on. */
  batchFailed: [error: unknown];
}

export interface Relay extends EventEmitter<RelayEvents> {
  readonly id: string;
  /** Rejects if the relay loop fails on its own (a bug: batch errors are retried); never resolves. */
  readonly failure: Promise<never>;
  /** Stops claiming; the batch in flight goes on, batches claimed ahead are released. `drain` too. */
  stop(): void;
  /**
   * Stops claiming, releases the batches claimed ahead (they have sent nothing), lets the batch in flight
   * publish and mark to the end, and when `deadline` aborts first, cuts the SNS calls and releases what
   * was not sent. No PublishBatch starts that could not end by the deadline's expiry (the rest is
   * released unsent), so the deadline need not cut one that SNS may already have taken. Resolves once
   * nothing is held, or one statement's time (`leaseMarginMs`) after the deadline aborts (it expired,
   * or a parent aborted it) whatever is still running: a query the server leaves unanswered is not
   * waited for (its rows come back when their lease ends). Without a deadline it waits for the batch
   * in flight, however long.
   */
  drain(deadline?: Deadline): Promise<RelaySummary>;
  /** What a forced exit would abandon: leased rows and requests in flight. */
  inFlight(): Record<string, number>;
  /**
   * Why the claim loop has stopped turning (a claim running past `claimBoundMs`), or undefined;
   * always undefined once stopping, when the drain's own deadline bounds what is left.
   */
  stalled(): string | undefined;
}

/** Starts a relay: it claims, publishes and marks until `drain` is called. */
export function createRelay(options: RelayOptions): Relay {
  const settings = relayOptionValues(options);
  const { db, log } = options;
  const topicArns = options.topicArns ?? {};
  const defaultTopicArn = options.defaultTopicArn || undefined;
  const outage = new OutageBackoff({ baseMs: settings.backoff.baseMs, maxMs: settings.outageBackoffMaxMs });
  const metrics = createRelayMetrics(options.metrics ?? new Registry(), db, outage);
  const marks = createPublishedMarker(db);
  const lanes = new Capacity(settings.publishConcurrency);
  const claims = new LoopWatch({ loop: "claim loop", step: "claim", boundMs: settings.claimBoundMs });

  const emitter = new EventEmitter<RelayEvents>();
  // Take no new work: aborted by stop() or drain().
  const stopping = new AbortController();
  const drainLink = new DrainDeadline();
  const wakeup = wakeOnInsert(options.listenUrl, log);
  const retention = options.retention ? startRetention(db, options.retention, log) : null;
  const chunks = createChunkPublisher(options.publisher, {
    timeoutMs: settings.publishTimeoutMs,
    metrics,
    log,
  });
  const limits = new TopicLimits(options.publisher.messageLimit?.bind(options.publisher), {
    timeoutMs: settings.publishTimeoutMs,
    log,
  });
  // Read before the first claim (which waits for it), so no lease runs out while they are read;
  // each read is bounded by the publish timeout and cut by the drain.
  const limitsRead = limits.load(
    [...Object.values(topicArns), ...(defaultTopicArn ? [defaultTopicArn] : [])],
    drainLink.deadline,
  );
  let published = 0;
  let dead = 0;

  const deps = {
    db,
    chunks,
    resolveTopic: (topic: string) => topicArns[topic] ?? defaultTopicArn,
    claimCheckSendWithinHours: settings.claimCheckSendWithinHours,
    marks,
    lanes,
    metrics,
    outage,
    limits,
    drain: drainLink,
    log,
    onDead(row: ClaimedRow, reason: string) {
      log?.error({ eventId: row.id, topic: row.topic, seq: row.seq, reason }, "event dead");
      emitter.emit("dead", { id: row.id, topic: row.topic, reason });
    },
  };

  /**
   * How long an idle relay sleeps: until the earliest scheduled row is due, or `pollMs`, whichever is
   * sooner — not a poll at the scheduled rows. An insert notification still ends the sleep, so a row
   * enqueued due sooner than that is seen then: the claim finds nothing due, and this is asked again.
   */
  const idleWaitMs = async (pollMs: number): Promise<number> => {
    try {
      const dueInMs = await msUntilNextDue(db);
      return dueInMs === undefined ? pollMs : Math.min(pollMs, Math.max(dueInMs, 1));
    } catch (error) {
      // The database is not answering: the next claim fails and says so. Poll meanwhile.
      log?.debug({ err: error }, "next scheduled due time unknown; waiting the poll interval");
      return pollMs;
    }
  };

  const pipeline = pipelineBatches(
    settings,
    {
      async claim() {
        await limitsRead;
        const claimedAt = performance.now();
        // A stop during the reads: claiming now would only lease rows to release them again.
        if (stopping.signal.aborted) return { rows: [], claimedAt };
        const rows = await claims.step(() =>
          claimBatch(db, settings.relayId, settings.batchSize, settings.leaseMs),
        );
        return { rows, claimedAt };
      },
      async process(batch, handedOver) {
        const report = await processBatch(settings, deps, batch, handedOver);
        published += report.published;
        dead += report.dead;
        const level = report.failed > 0 || report.released > 0 ? "warn" : "debug";
        log?.[level]({ ...report, durationMs: Math.round(report.durationMs) }, "batch");
        emitter.emit("batch", report);
      },
      async release(batch) {
        await releaseRows(
          db,
          settings.relayId,
          batch.rows.map((row) => row.id),
        );
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
        emitter.emit("batchFailed", error);
      },
      recovered(failures) {
        log?.info({ failedInARow: failures }, "batches working again");
      },
    },
    stopping.signal,
  );
  const running = pipeline.done;
  const failure = running.then(
    () => new Promise<never>(() => {}),
    (error: unknown) => Promise.reject(error),
  );
  // The caller may never look at `failure`; the loop's own errors are all caught, so this is for bugs.
  failure.catch(() => {});

  /** What is left in the table; -1 when the database cannot tell (or not before `giveUp`). */
  const countUnsent = async (giveUp: Deadline): Promise<number> => {
    const counted = sql<{ unsent: string }>`
      SELECT count(*) AS unsent FROM outbox WHERE published_at IS NULL AND dead_at IS NULL
    `.execute(db);
    try {
      const { rows } = await untilAborted(counted, giveUp);
      return Number(rows[0]?.unsent ?? -1);
    } catch (error) {
      if (giveUp.aborted)
        log?.warn(
          { marginMs: settings.leaseMarginMs },
          "could not count unsent rows: no answer within the drain's last-statement margin",
        );
      else log?.warn({ err: error }, "could not count unsent rows");
      return -1;
    }
  };

  const relay = Object.assign(emitter, {
    id: settings.relayId,
    failure,
    stop() {
      stopping.abort(new Error("relay stopping"));
    },
    async drain(deadline = Deadline.after(Number.POSITIVE_INFINITY)): Promise<RelaySummary> {
      stopping.abort(new Error("relay draining"));
      const unlink = drainLink.follow(deadline);
      // The batch cut at the deadline still gets one statement's time for its last marks and releases
      // (`leaseMarginMs`, the statement timeout, which the lease keeps back for them). A live server
      // answers them within it; past it the database is not answering.
      const giveUp = deadline.withGrace(settings.leaseMarginMs);
      try {
        // Raced, not awaited: a statement the server never answers (a frozen server) would hold the
        // stop past its budget, and the platform's SIGKILL would end it anyway.
        const ended = await settlesBefore(
          running.catch(() => {}),
          giveUp,
        );
        const clean = !deadline.aborted;
        if (!ended)
          log?.warn(
            { leasedRows: pipeline.leasedRows(), marginMs: settings.leaseMarginMs },
            "drain deadline: the batch's statements are unanswered; its rows are left to their lease",
          );
        const retentionStopped = retention ? settlesBefore(retention.stop(), giveUp) : true;
        await Promise.all([wakeup.close(), retentionStopped]);
        return { clean, published, unsent: await countUnsent(giveUp), dead };
      } finally {
        giveUp.dispose();
        unlink();
      }
    },
    inFlight: () => ({ leasedRows: pipeline.leasedRows(), publishRequests: chunks.requestsInFlight() }),
    stalled: () => (stopping.signal.aborted ? undefined : claims.stalled()),
  });
  return relay;
}
