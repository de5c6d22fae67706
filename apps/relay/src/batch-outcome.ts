import { type BackoffPolicy, backoffMs } from "@outbox/shared";
import type { ClaimedRow } from "./claim-batch.js";
import type { RowFailure } from "./mark-results.js";

/** A row that dies with this batch, announced once its mark has committed. */
export interface DeadRow {
  readonly row: ClaimedRow;
  readonly reason: string;
  readonly cause: "attempts" | "unsendable";
}

/** When a failed row is tried again, and how often at most. */
export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly backoff: BackoffPolicy;
}

/**
 * What a batch decided for each of its rows while it published: published, failed (an attempt:
 * backoff or dead), deferred (a wait, no attempt), dead at once (unsendable), or released (not sent;
 * free for any relay at once). Nothing here touches the database: `commitBatch` marks it.
 *
 * A key whose row failed, waits or was cut off publishes nothing more in this batch: its later rows
 * would overtake it. Those are released and come back behind it, blocked by the claim until it succeeds.
 */
export class BatchOutcome {
  published = 0;
  deferred = 0;
  readonly failures: RowFailure[] = [];
  readonly dead: DeadRow[] = [];
  readonly released: string[] = [];
  /**
   * The first failed mark of published rows. Every chunk sent after it would be one more the table
   * does not show as published, to be sent again: the batch sends nothing more, and fails.
   */
  markError: unknown;
  readonly #stoppedKeys = new Set<string>();
  readonly #retry: RetryPolicy;

  constructor(retry: RetryPolicy) {
    this.#retry = retry;
  }

  /** Whether a row before this one, of the same key, did not get through in this batch. */
  isHeldBack(row: ClaimedRow): boolean {
    return row.orderingKey !== null && this.#stoppedKeys.has(row.orderingKey);
  }

  /** SNS refused the row's entry: its own failure, an attempt; dead once they are spent. */
  fail(row: ClaimedRow, reason: string): void {
    const attempts = row.attempts + 1;
    const isDead = attempts >= this.#retry.maxAttempts;
    this.failures.push({
      id: row.id,
      delayMs: backoffMs(attempts, this.#retry.backoff),
      error: reason,
      attempt: true,
      dead: isDead,
    });
    if (isDead) this.dead.push({ row, reason: `after ${attempts} attempts: ${reason}`, cause: "attempts" });
    this.#stopKey(row);
  }

  /** The bus is down for the row's topic: it waits `delayMs`, spending no attempt. */
  defer(row: ClaimedRow, delayMs: number, reason: string): void {
    this.failures.push({
      id: row.id,
      delayMs: Math.ceil(delayMs),
      error: reason,
      attempt: false,
      dead: false,
    });
    this.deferred += 1;
    this.#stopKey(row);
  }

  /**
   * The row cannot be sent (no topic, too large): dead at once. Its key's later rows wait behind it,
   * as behind any dead row (see claim-batch.ts), until an operator requeues it or skips it.
   */
  unsendable(row: ClaimedRow, reason: string): void {
    this.failures.push({ id: row.id, delayMs: 0, error: reason, attempt: true, dead: true });
    this.dead.push({ row, reason, cause: "unsendable" });
    this.#stopKey(row);
  }

  /** Not sent, or sent with the outcome unknown: given back without an attempt. */
  release(row: ClaimedRow): void {
    this.released.push(row.id);
    this.#stopKey(row);
  }

  /** Rows that spent an attempt (the deferred ones spent none). */
  get failed(): number {
    return this.failures.length - this.deferred;
  }

  #stopKey(row: ClaimedRow): void {
    if (row.orderingKey !== null) this.#stoppedKeys.add(row.orderingKey);
  }
}
