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

/**
 * Group commit for `markPublished`: each chunk asks to be marked as soon as its response arrives; chunks
 * answered in the same turn of the event loop, or while an UPDATE runs, are marked together by the next
 * one. A hard kill therefore re-sends only chunks in flight (or whose mark was in flight), while a fast
 * bus costs one UPDATE per wave instead of one per chunk. The first UPDATE waits for `setImmediate`
 * only: responses that arrived together are all handled by then, and nothing else is waited for.
 */
export function createPublishedMarker(db: Kysely<Database>): (ids: readonly string[]) => Promise<void> {
  let queued: string[] = [];
  let waiting: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  let flushing = false;
  const flush = async () => {
    flushing = true;
    while (queued.length > 0) {
      const ids = queued;
      const waiters = waiting;
      queued = [];
      waiting = [];
      try {
        await markPublished(db, ids);
        for (const waiter of waiters) waiter.resolve();
      } catch (error) {
        for (const waiter of waiters) waiter.reject(error);
      }
    }
    flushing = false;
  };
  return (ids) =>
    new Promise<void>((resolve, reject) => {
      queued.push(...ids);
      waiting.push({ resolve, reject });
      if (!flushing) {
        flushing = true;
        setImmediate(() => void flush());
      }
    });
}
