import { performance } from "node:perf_hooks";
import { Deadline } from "@outbox/client";
import {
  type BackoffPolicy,
  backoffMs,
  connectionFailureIn,
  connectionLayerFaultIn,
  deadlineConnection,
  type Logger,
  PostgresUnansweredError,
  sleep,
} from "@outbox/shared";
import { CompiledQuery, type PostgresPool } from "kysely";
import { echoed } from "../errors.js";
import type { ConsumerMetrics } from "../metrics.js";
import type { IntakeGate } from "./intake-gate.js";

/**
 * Probes of an unreachable database: the first soon, then doubling to 1 s, so that the consumer
 * resumes within about a second of the database answering again, at one connection attempt a second.
 */
const PROBE_BACKOFF: BackoffPolicy = { baseMs: 100, maxMs: 1_000 };

/**
 * Connection-layer faults this far apart are one episode: logged once, when it begins (a pooler that
 * breaks prepared statements fails every message for a while, and one line says so).
 */
const FAULT_EPISODE_GAP_MS = 60_000;

export interface DatabaseOutageOptions {
  readonly pool: PostgresPool;
  /** How long a probe may take to get a connection and an answer (DB_STATEMENT_TIMEOUT_MS). */
  readonly probeTimeoutMs: number;
  readonly gate: IntakeGate;
  /** Aborts when intake stops: probing ends with it. */
  readonly stopping: AbortSignal;
  readonly log: Logger;
  readonly metrics: ConsumerMetrics;
}

/** What the outages were, for the `drained` line. */
export interface OutageCounts {
  readonly databaseOutages: number;
  /** Their total length, the one still going included. */
  readonly databaseOutageMs: number;
}

/** A deadline that passed while Postgres had not answered; a handler may throw anything, even a revoked Proxy. */
function unansweredIn(error: unknown): Error | undefined {
  try {
    return error instanceof PostgresUnansweredError ? error : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The database every message needs, unreachable: not the message's fault, so it must spend no
 * attempts. A message whose transaction failed on a lost connection asks `explains`; if a probe of
 * the database fails too, the outage begins: intake stops (the gate), what the consumer holds is
 * handed back at once, and a probe with bounded backoff runs until the database answers, when
 * intake resumes. One warn line when it begins, one info line when it ends.
 *
 * The probe decides, not the error alone: a handler's own HTTP call refused looks just like a lost
 * connection to Postgres, and is the handler's failure (the kill switch's business).
 */
export class DatabaseOutage {
  readonly #options: DatabaseOutageOptions;
  /** `performance.now()` when the current outage began; undefined while the database answers. */
  #since: number | undefined;
  /** The probe that decides whether the failures arriving now are an outage, shared by all of them. */
  #confirming: Promise<boolean> | undefined;
  #outages = 0;
  #pastMs = 0;
  /** `performance.now()` of the last connection-layer fault while the database answered. */
  #lastFaultAt: number | undefined;

  constructor(options: DatabaseOutageOptions) {
    this.#options = options;
  }

  /** The database is unreachable: hand back whatever is in hand, start nothing. */
  get down(): boolean {
    return this.#since !== undefined;
  }

  /**
   * Whether `error`, a message's failure, is the database being unreachable: a connection failure,
   * or a deadline that passed while Postgres had not answered (a frozen server), confirmed by a probe
   * that fails too (or an outage already on). Begins the outage then.
   */
  async explains(error: unknown): Promise<boolean> {
    const failure = connectionFailureIn(error) ?? unansweredIn(error);
    if (failure === undefined) return false;
    if (this.down) return true;
    this.#confirming ??= this.#probe().finally(() => {
      this.#confirming = undefined;
    });
    if (await this.#confirming) return this.#connectionLayerFault(error);
    this.#begin(failure);
    return true;
  }

  /**
   * With the database answering, a failure the connection layer caused (a lost or pooled server
   * connection, a clashing prepared statement: see connectionLayerFaultIn) is still not the
   * message's: handed back without spending attempts, and warned of once per episode.
   */
  #connectionLayerFault(error: unknown): boolean {
    const fault = connectionLayerFaultIn(error);
    if (fault === undefined) return false;
    const now = performance.now();
    if (this.#lastFaultAt === undefined || now - this.#lastFaultAt > FAULT_EPISODE_GAP_MS) {
      const code = (fault as NodeJS.ErrnoException).code;
      this.#options.log.warn(
        { cause: echoed(`${code}: ${fault.message}`) },
        "database connection failed a message, not the message: handed back without spending attempts",
      );
    }
    this.#lastFaultAt = now;
    return true;
  }

  counts(): OutageCounts {
    const current = this.#since === undefined ? 0 : performance.now() - this.#since;
    return { databaseOutages: this.#outages, databaseOutageMs: Math.round(this.#pastMs + current) };
  }

  #begin(cause: Error): void {
    if (this.down || this.#options.stopping.aborted) return;
    const { gate, log, metrics } = this.#options;
    this.#since = performance.now();
    this.#outages += 1;
    gate.close("database unreachable");
    metrics.databaseUnreachable.set(1);
    // The connection error's own code and words, never a statement's (which may quote a row).
    const code = (cause as NodeJS.ErrnoException).code;
    log.warn(
      { cause: echoed(code === undefined ? cause.message : `${code}: ${cause.message}`) },
      "database unreachable: intake paused, messages handed back without spending attempts; probing",
    );
    void this.#probeUntilBack();
  }

  async #probeUntilBack(): Promise<void> {
    const { stopping } = this.#options;
    for (let attempt = 1; !stopping.aborted; attempt += 1) {
      await sleep(backoffMs(attempt, PROBE_BACKOFF), stopping);
      if (stopping.aborted) return;
      if (await this.#probe()) {
        this.#end(attempt);
        return;
      }
    }
  }

  #end(probes: number): void {
    if (this.#since === undefined) return;
    const { gate, log, metrics } = this.#options;
    const outageMs = Math.round(performance.now() - this.#since);
    this.#pastMs += outageMs;
    this.#since = undefined;
    metrics.databaseUnreachable.set(0);
    gate.open("database unreachable");
    log.info({ outageMs, probes }, "database answering again: intake resumed");
  }

  /** `SELECT 1` on a connection from the pool: whether the pool can hand out a healthy one now. */
  async #probe(): Promise<boolean> {
    const { pool, probeTimeoutMs, stopping } = this.#options;
    const deadline = Deadline.after(probeTimeoutMs, stopping);
    try {
      await deadlineConnection(pool, deadline, (db) => db.executeQuery(CompiledQuery.raw("SELECT 1")));
      return true;
    } catch {
      return false;
    } finally {
      deadline.dispose();
    }
  }
}
