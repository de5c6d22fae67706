import type { OutboxTables as Database } from "@outbox/client";
import { type Kysely, sql } from "kysely";

/**
 * A row whose publish failed: retried after `delayMs`, or dead when `dead`. `attempt` says whether it
 * counts toward RELAY_MAX_ATTEMPTS: only a failure that is the row's own (SNS refused its entry, or it
 * cannot be sent) does; a request that failed as a whole (SNS down) only makes it wait.
 */
export interface RowFailure {
  readonly id: string;
  readonly delayMs: number;
  readonly error: string;
  readonly attempt: boolean;
  readonly dead: boolean;
}

/**
 * Marks rows published and frees their lease. Not guarded by `locked_by`: the rows did reach the bus,
 * so recording it is right even if our lease ran out meanwhile.
 */
export async function markPublished(db: Kysely<Database>, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    UPDATE outbox SET published_at = now(), locked_until = NULL, locked_by = NULL
    WHERE id = ANY(${ids}::uuid[]) AND published_at IS NULL
  `.execute(db);
}

/**
 * Records failures: an attempt or a mere wait, backoff or death, and the reason. Guarded by `locked_by`
 * so a relay whose lease expired cannot reschedule a row another relay has claimed since.
 */
export async function markFailed(
  db: Kysely<Database>,
  relayId: string,
  failures: readonly RowFailure[],
): Promise<void> {
  if (failures.length === 0) return;
  await sql`
    UPDATE outbox o
    SET attempts = o.attempts + CASE WHEN f.attempt THEN 1 ELSE 0 END,
        available_at = now() + f.delay_ms * interval '1 millisecond',
        last_error = f.error,
        dead_at = CASE WHEN f.dead THEN now() END,
        locked_until = NULL,
        locked_by = NULL
    FROM unnest(
      ${failures.map((f) => f.id)}::uuid[],
      ${failures.map((f) => f.delayMs)}::integer[],
      ${failures.map((f) => f.error)}::text[],
      ${failures.map((f) => f.attempt)}::boolean[],
      ${failures.map((f) => f.dead)}::boolean[]
    ) AS f(id, delay_ms, error, attempt, dead)
    WHERE o.id = f.id AND o.locked_by = ${relayId} AND o.published_at IS NULL
  `.execute(db);
}

/**
 * Gives rows back without counting an attempt (not sent, or sent with the outcome unknown after an
 * abort): `locked_until = NULL` makes them claimable at once by any relay, instead of after the lease.
 */
export async function releaseRows(
  db: Kysely<Database>,
  relayId: string,
  ids: readonly string[],
): Promise<void> {
  if (ids.length === 0) return;
  await sql`
    UPDATE outbox SET locked_until = NULL, locked_by = NULL
    WHERE id = ANY(${ids}::uuid[]) AND locked_by = ${relayId} AND published_at IS NULL
  `.execute(db);
}

/** Marks chunks published as their answers come in, and counts the marks that failed. */
export interface PublishedMarker {
  /** Marks the rows published, in one UPDATE with the others asked for in the same turn. */
  mark(ids: readonly string[]): Promise<void>;
  /**
   * Marks that failed so far, in any batch: a batch sends nothing more once one failed after it
   * started (see sendChunk), since the database may not record what it sends next either.
   */
  failures(): number;
}

/**
 * Group commit for `markPublished`: each chunk asks to be marked as soon as its response arrives, and
 * the chunks answered in the same turn of the event loop are marked together by one UPDATE, sent
 * after `setImmediate` (responses that arrived together are all handled by then). The UPDATEs
 * overlap: one asked for while another runs is sent at once instead of queueing behind it. A chunk's
 * lane is held until its mark commits, so a mark waiting for another's round trip kept a lane idle
 * (issue #29: 9–25 ms a mark against a 20 ms PublishBatch); the rows of two chunks are never the
 * same, so the UPDATEs cannot wait on each other's locks, and the lanes bound how many run at once.
 */
export function createPublishedMarker(db: Kysely<Database>): PublishedMarker {
  let queued: string[] = [];
  let waiting: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  let scheduled = false;
  let failures = 0;
  const flush = async () => {
    scheduled = false;
    const ids = queued;
    const waiters = waiting;
    queued = [];
    waiting = [];
    try {
      await markPublished(db, ids);
      for (const waiter of waiters) waiter.resolve();
    } catch (error) {
      failures += 1;
      for (const waiter of waiters) waiter.reject(error);
    }
  };
  return {
    mark: (ids) =>
      new Promise<void>((resolve, reject) => {
        queued.push(...ids);
        waiting.push({ resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(() => void flush());
        }
      }),
    failures: () => failures,
  };
}
