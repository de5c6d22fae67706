import { EventEmitter } from "node:events";
import { performance } from "node:perf_hooks";
import { Deadline, forwardAbort } from "@outbox/client";
import { settlesBefore } from "@outbox/shared";
import { sql } from "kysely";
import { Registry } from "prom-client";
import { type ClaimedRow, claimBatch } from "./claim-batch.js";
import { createPublishedMarker, releaseRows } from "./mark-results.js";
import { createRelayMetrics } from "./metrics.js";
import { OutageBackoff } from "./outage-backoff.js";
import { pipelineBatches } from "./pipeline-batches.js";
import { type BatchReport, processBatch } from "./process-batch.js";
import type { Publisher } from "./publisher.js";
import { type RelayOptions, relayOptionValues } from "./relay-options.js";
import { startRetention } from "./retention.js";
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
   * was not sent. Resolves once nothing is held, or one statement's time (`leaseMarginMs`) after
   * `deadline` whatever is still running: a query the server leaves unanswered is not waited for
   * (its rows come back when their lease ends). `budgetMs`, how long `deadline` gives from now: no
   * PublishBatch starts that could not end before it (the rest is released unsent), so the deadline
   * need not cut one that SNS may already have taken.
   */
  drain(deadline?: AbortSignal, budgetMs?: number): Promise<RelaySummary>;
  /** What a forced exit would abandon: leased rows and requests in flight. */
  inFlight(): Record<string, number>;
}

/**
 * Aborts `ms` after `deadline` does: the time a drain still gives the batch cut at its deadline for
 * its last marks and releases (`leaseMarginMs`, the statement timeout, which the lease keeps back
 * for them). A live server answers them within it; past it the database is not answering.
 */
function afterLastStatement(deadline: AbortSignal, ms: number): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const start = () => {
    timer = setTimeout(() => controller.abort(new Error("the drain's last statements went unanswered")), ms);
  };
  if (deadline.aborted) start();
  else deadline.addEventListener("abort", start, { once: true });
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      deadline.removeEventListener("abort", start);
    },
  };
}

/** Starts a relay: it claims, publishes and marks until `drain` is called. */
export function createRelay(options: RelayOptions): Relay {
  const settings = relayOptionValues(options);
  const { db, log } = options;
  const topicArns = options.topicArns ?? {};
  const defaultTopicArn = options.defaultTopicArn || undefined;
  const outage = new OutageBackoff({ baseMs: settings.backoff.baseMs, maxMs: settings.outageBackoffMaxMs });
  const metrics = createRelayMetrics(options.metrics ?? new Registry(), db, outage);
  const markPublished = createPublishedMarker(db);

  const emitter = new EventEmitter<RelayEvents>();
  const stopping = new AbortController();
  const abandon = new AbortController();
  const wakeup = wakeOnInsert(options.listenUrl, log);
  const retention = options.retention ? startRetention(db, options.retention, log) : null;
  let requests = 0;
  let drainEndsAt = Number.POSITIVE_INFINITY;
  let published = 0;
  let dead = 0;

  const deps = {
    db,
    publisher: {
      // Counts requests in flight for inFlight(), around whatever publisher was given.
      async publishBatch(...args: Parameters<Publisher["publishBatch"]>) {
        requests += 1;
        try {
          return await options.publisher.publishBatch(...args);
        } finally {
          requests -= 1;
        }
      },
    },
    resolveTopic: (topic: string) => topicArns[topic] ?? defaultTopicArn,
    markPublished,
    metrics,
    outage,
    drainEndsAt: () => drainEndsAt,
    log,
    onDead(row: ClaimedRow, reason: string) {
      log?.error({ eventId: row.id, topic: row.topic, seq: row.seq, reason }, "event dead");
      emitter.emit("dead", { id: row.id, topic: row.topic, reason });
    },
  };

  const pipeline = pipelineBatches(
    settings,
    {
      async claim() {
        const claimedAt = performance.now();
        const rows = await claimBatch(db, settings.relayId, settings.batchSize, settings.leaseMs);
        return { rows, claimedAt };
      },
      async process(batch) {
        const report = await processBatch(settings, deps, batch, abandon.signal);
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
      wait: (ms, signal) => wakeup.wait(ms, signal),
      failed(error, consecutiveErrors) {
        log?.error(
          { err: error, consecutiveErrors },
          "batch failed; rows stay leased until their lease ends",
        );
        emitter.emit("batchFailed", error);
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

  /** What is left in the table; -1 when the database cannot tell (or not before `deadline`). */
  const countUnsent = async (deadline: Deadline): Promise<number> => {
    try {
      let unsent = -1;
      const counted = sql<{ unsent: string }>`
        SELECT count(*) AS unsent FROM outbox WHERE published_at IS NULL AND dead_at IS NULL
      `
        .execute(db)
        .then(({ rows }) => {
          unsent = Number(rows[0]?.unsent ?? -1);
        });
      if (!(await settlesBefore(counted, deadline))) {
        counted.catch(() => {});
        log?.warn(
          { marginMs: settings.leaseMarginMs },
          "could not count unsent rows: no answer within the drain's last-statement margin",
        );
      }
      return unsent;
    } catch (error) {
      log?.warn({ err: error }, "could not count unsent rows");
      return -1;
    }
  };

  const relay = Object.assign(emitter, {
    id: settings.relayId,
    failure,
    stop() {
      stopping.abort(new Error("relay stopping"));
    },
    async drain(deadline?: AbortSignal, budgetMs?: number): Promise<RelaySummary> {
      if (budgetMs !== undefined) drainEndsAt = performance.now() + budgetMs;
      stopping.abort(new Error("relay draining"));
      const unlink = deadline ? forwardAbort(deadline, abandon) : () => {};
      const lastStatements = afterLastStatement(abandon.signal, settings.leaseMarginMs);
      const giveUp = Deadline.after(Number.POSITIVE_INFINITY, lastStatements.signal);
      try {
        // Raced, not awaited: a statement the server never answers (a frozen server) would hold the
        // stop past its budget, and the platform's SIGKILL would end it anyway.
        const ended = await settlesBefore(
          running.catch(() => {}),
          giveUp,
        );
        const clean = !abandon.signal.aborted;
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
        lastStatements.dispose();
        unlink();
      }
    },
    inFlight: () => ({ leasedRows: pipeline.leasedRows(), publishRequests: requests }),
  });
  return relay;
}
