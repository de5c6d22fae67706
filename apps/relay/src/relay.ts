import { EventEmitter } from "node:events";
import os from "node:os";
import {
  type BackoffPolicy,
  backoffMs,
  type Database,
  type DatabaseClientConfig,
  forwardAbort,
  type Logger,
  numericOption,
  type Setting,
  sleep,
} from "@outbox/shared";
import { type Kysely, sql } from "kysely";
import { Registry } from "prom-client";
import type { ClaimedRow } from "./claim-batch.js";
import { createPublishedMarker } from "./mark-results.js";
import { createRelayMetrics } from "./metrics.js";
import { type BatchReport, processBatch } from "./process-batch.js";
import type { Publisher } from "./publisher.js";
import { type RetentionOptions, startRetention } from "./retention.js";
import { relaySettings } from "./settings.js";
import { wakeOnInsert } from "./wake-on-insert.js";

export interface RelayOptions {
  readonly db: Kysely<Database>;
  readonly publisher: Publisher;
  /**
   * The LISTEN connection's database: a URL, or a pool's `DatabaseHandle.clientConfig`, which carries
   * its TLS settings (the daemon passes that); `null` polls only.
   */
  readonly listenUrl: string | DatabaseClientConfig | null;
  /** Logical topic (the `topic` column) → topic ARN. */
  readonly topicArns?: Readonly<Record<string, string>>;
  /** ARN for topics missing from `topicArns`; without it such rows are dead at once. */
  readonly defaultTopicArn?: string;
  /** Written to `locked_by`; defaults to host, pid and a random suffix. */
  readonly relayId?: string;
  /** RELAY_BATCH_SIZE's default and range (docs/relay.md), like every option read from a setting. */
  readonly batchSize?: number;
  /** As RELAY_LEASE_MS. */
  readonly leaseMs?: number;
  /** Lease time kept back for the batch's final marks; default 5 000 (the statement timeout). */
  readonly leaseMarginMs?: number;
  /** PublishBatch requests in flight, as RELAY_PUBLISH_CONCURRENCY. */
  readonly publishConcurrency?: number;
  /** Bound of one PublishBatch with its retries; a timeout is a failed attempt. Default 15 000. */
  readonly publishTimeoutMs?: number;
  /** As RELAY_MAX_ATTEMPTS. */
  readonly maxAttempts?: number;
  /** As RELAY_BACKOFF_BASE_MS and RELAY_BACKOFF_MAX_MS (1 s doubling to 5 min); base ≤ max. */
  readonly backoff?: Partial<BackoffPolicy>;
  /** As RELAY_POLL_INTERVAL_MS. */
  readonly pollIntervalMs?: number;
  /** Delete old published rows; `null` (default) keeps them. */
  readonly retention?: RetentionOptions | null;
  readonly log?: Logger;
  /** Where the relay's metrics register; a private registry when omitted. */
  readonly metrics?: Registry;
}

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

export class RelayOptionsError extends Error {
  override readonly name = "RelayOptionsError";
}

export interface Relay extends EventEmitter<RelayEvents> {
  readonly id: string;
  /** Rejects if the relay loop fails on its own (a bug: batch errors are retried); never resolves. */
  readonly failure: Promise<never>;
  /** Stops claiming; the batch in flight goes on. `drain` does this too. */
  stop(): void;
  /**
   * Stops claiming, lets the batch in flight publish and mark to the end, and when `deadline` aborts
   * first, cuts the SNS calls and releases what was not sent. Resolves once nothing is held.
   */
  drain(deadline?: AbortSignal): Promise<RelaySummary>;
  /** What a forced exit would abandon: leased rows and requests in flight. */
  inFlight(): Record<string, number>;
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RelayOptionsError(`${name} must be a positive integer, got ${value}`);
  return value;
}

const optionsError = (message: string) => new RelayOptionsError(message);
/** The longest wait between retries of a failing batch: how late a recovered database or bus is noticed. */
const BATCH_FAILURE_MAX_MS = 30_000;

/** Each numeric option and the RELAY_… setting the daemon fills it from (backoff's two aside). */
const optionSettings = {
  batchSize: relaySettings.batchSize,
  leaseMs: relaySettings.leaseMs,
  publishConcurrency: relaySettings.publishConcurrency,
  maxAttempts: relaySettings.maxAttempts,
  pollIntervalMs: relaySettings.pollIntervalMs,
} satisfies { [K in keyof RelayOptions]?: Setting<number> };

/** The option as given, checked by its setting's rules, or that setting's default. */
function optionValue(options: RelayOptions, name: keyof typeof optionSettings): number {
  return numericOption(optionSettings[name], options[name], name, optionsError);
}

/** Starts a relay: it claims, publishes and marks until `drain` is called. */
export function createRelay(options: RelayOptions): Relay {
  const settings = {
    relayId: options.relayId ?? `${os.hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`,
    batchSize: optionValue(options, "batchSize"),
    leaseMs: optionValue(options, "leaseMs"),
    leaseMarginMs: options.leaseMarginMs ?? 5_000,
    publishConcurrency: optionValue(options, "publishConcurrency"),
    publishTimeoutMs: positive("publishTimeoutMs", options.publishTimeoutMs ?? 15_000),
    maxAttempts: optionValue(options, "maxAttempts"),
    backoff: {
      baseMs: numericOption(
        relaySettings.backoffBaseMs,
        options.backoff?.baseMs,
        "backoff.baseMs",
        optionsError,
      ),
      maxMs: numericOption(relaySettings.backoffMaxMs, options.backoff?.maxMs, "backoff.maxMs", optionsError),
    },
  };
  if (settings.backoff.baseMs > settings.backoff.maxMs) {
    throw new RelayOptionsError(
      `backoff.baseMs (${settings.backoff.baseMs}) must not exceed backoff.maxMs (${settings.backoff.maxMs})`,
    );
  }
  if (settings.leaseMarginMs + settings.publishTimeoutMs >= settings.leaseMs) {
    throw new RelayOptionsError(
      "leaseMs must exceed publishTimeoutMs + leaseMarginMs, or no chunk could start",
    );
  }
  const pollIntervalMs = optionValue(options, "pollIntervalMs");
  const { db, log } = options;
  const topicArns = options.topicArns ?? {};
  const defaultTopicArn = options.defaultTopicArn || undefined;
  const metrics = createRelayMetrics(options.metrics ?? new Registry(), db);
  const markPublished = createPublishedMarker(db);

  const emitter = new EventEmitter<RelayEvents>();
  const stopping = new AbortController();
  const abandon = new AbortController();
  const wakeup = wakeOnInsert(options.listenUrl, log);
  const retention = options.retention ? startRetention(db, options.retention, log) : null;
  let held = 0;
  let requests = 0;
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
    log,
    onDead(row: ClaimedRow, reason: string) {
      log?.error({ eventId: row.id, topic: row.topic, seq: row.seq, reason }, "event dead");
      emitter.emit("dead", { id: row.id, topic: row.topic, reason });
    },
    onHeld(rows: number) {
      held = rows;
    },
  };

  const loop = async () => {
    let consecutiveErrors = 0;
    while (!stopping.signal.aborted) {
      let report: BatchReport;
      try {
        report = await processBatch(settings, deps, abandon.signal);
        consecutiveErrors = 0;
      } catch (error) {
        consecutiveErrors += 1;
        log?.error(
          { err: error, consecutiveErrors },
          "batch failed; rows stay leased until their lease ends",
        );
        emitter.emit("batchFailed", error);
        await sleep(
          backoffMs(consecutiveErrors, { baseMs: pollIntervalMs, maxMs: BATCH_FAILURE_MAX_MS }),
          stopping.signal,
        );
        continue;
      }
      published += report.published;
      dead += report.dead;
      if (report.claimed > 0) {
        const level = report.failed > 0 || report.released > 0 ? "warn" : "debug";
        log?.[level]({ ...report, durationMs: Math.round(report.durationMs) }, "batch");
        emitter.emit("batch", report);
      }
      // A full batch means more may be waiting: claim again at once instead of sleeping.
      if (report.claimed < settings.batchSize) await wakeup.wait(pollIntervalMs, stopping.signal);
    }
  };
  const running = loop();
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
    async drain(deadline?: AbortSignal): Promise<RelaySummary> {
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
    inFlight: () => ({ leasedRows: held, publishRequests: requests }),
  });
  return relay;
}
