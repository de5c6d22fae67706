import type { OutboxTables as Database } from "@outbox/client";
import { holdsItsKey } from "@outbox/relay/operations";
import { type Kysely, sql } from "kysely";

/** A key held by a dead head: what an operator needs to choose between requeue and skip. */
export interface BlockedKeyRow {
  readonly orderingKey: string;
  readonly topic: string;
  /** The dead row holding the key (its oldest dead row). */
  readonly eventId: string;
  readonly eventType: string;
  readonly lastError: string | null;
  readonly attempts: number;
  /** Seconds since the head died. */
  readonly deadSeconds: number;
  /** Unsent events of the key waiting behind it. */
  readonly waiting: number;
}

/** The most blocked keys a page lists; `relay status` counts them all. */
export const BLOCKED_KEYS_LISTED = 200;

/**
 * Each blocked key's head, oldest death first, with the count waiting behind it: the head from
 * `outbox_dead_heads` (migration 0010, its predicate stated by holdsItsKey), the count from
 * `outbox_pending_by_key` (one range of the key), so the page costs the blocked keys, not the backlog.
 */
export async function listBlockedKeys(db: Kysely<Database>): Promise<BlockedKeyRow[]> {
  const { rows } = await sql<{
    ordering_key: string;
    topic: string;
    id: string;
    event_type: string;
    last_error: string | null;
    attempts: number;
    dead: number;
    waiting: string;
  }>`
    SELECT h.ordering_key, h.topic, h.id, h.event_type, h.last_error, h.attempts,
           extract(epoch FROM now() - h.dead_at)::float8 AS dead,
           (SELECT count(*) FROM outbox w
            WHERE w.ordering_key = h.ordering_key AND w.published_at IS NULL AND w.dead_at IS NULL) AS waiting
    FROM (
      SELECT DISTINCT ON (d.ordering_key) d.ordering_key, d.topic, d.id, d.event_type, d.last_error,
             d.attempts, d.dead_at
      FROM outbox d
      WHERE ${holdsItsKey("d")} AND d.ordering_key IS NOT NULL
      ORDER BY d.ordering_key, d.seq
    ) h
    ORDER BY h.dead_at, h.ordering_key
    LIMIT ${BLOCKED_KEYS_LISTED}
  `.execute(db);
  return rows.map((row) => ({
    orderingKey: row.ordering_key,
    topic: row.topic,
    eventId: row.id,
    eventType: row.event_type,
    lastError: row.last_error,
    attempts: row.attempts,
    deadSeconds: Math.max(0, Math.round(row.dead)),
    waiting: Number(row.waiting),
  }));
}
