import { EventEmitter } from "node:events";
import { performance } from "node:perf_hooks";
import { forwardAbort } from "@outbox/shared";
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
   * was not sent. Resolves once nothing is held. `budgetMs`, how long `deadline` gives from now: no
   * PublishBatch starts that could not end before it (the rest is released unsent), so the deadline
   * need not cut one that SNS may already have taken.
   */
  drain(deadline?: AbortSignal, budgetMs?: number): Promise<RelaySummary>;
  /** What a forced exit would abandon: leased rows and requests in flight. */
  inFlight(): Record<string, number>;
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

  const countUnsent = async (): Promise<number> => {
    try {
      const { rows } = await sql<{ unsent: string }>`
        SELECT count(*) AS unsent FROM outbox WHERE published_at IS NULL AND dead_at IS NULL
      `.execute(db);
      return Number(rows[0]?.unsent ?? -1);
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
      try {
        await running.catch(() => {});
      } finally {
        unlink();
      }
      const clean = !abandon.signal.aborted;
      await Promise.all([wakeup.close(), retention?.stop()]);
      return { clean, published, unsent: await countUnsent(), dead };
    },
    inFlight: () => ({ leasedRows: pipeline.leasedRows(), publishRequests: requests }),
  });
  return relay;
}
