import type { OutboxTables as Database } from "@outbox/client";
import { type Kysely, sql } from "kysely";
import { deadRowKind } from "./reason-kind.js";

/** Which dead rows a list or an action takes: every field absent, all of them. */
export interface DeadRowFilter {
  readonly topic?: string;
  readonly eventType?: string;
  /** A reason kind (deadRowKind). */
  readonly kind?: string;
  /** Only rows dead at least this many seconds. */
  readonly olderThanSeconds?: number;
  /** Only these rows (event ids). */
  readonly ids?: readonly string[];
  /** Only rows still holding their key (what a skip changes). */
  readonly holdingKey?: boolean;
}

export interface DeadRow {
  readonly id: string;
  readonly topic: string;
  readonly eventType: string;
  readonly orderingKey: string | null;
  readonly kind: string;
  readonly lastError: string | null;
  readonly attempts: number;
  readonly deadAt: string;
  readonly ageSeconds: number;
  /** The row still holds its ordering key (no skip since it died). */
  readonly holdsKey: boolean;
  readonly headers: Readonly<Record<string, string>>;
  /** The payload's first PAYLOAD_HEAD characters, as stored; `payloadChars` is its whole length. */
  readonly payloadHead: string;
  readonly payloadChars: number;
}

export interface ReasonGroup {
  readonly kind: string;
  readonly count: number;
}

/** The most rows a list shows; the groups count them all. */
export const DEAD_ROWS_LISTED = 200;
/** The most characters of a payload read from the database (the page caps what it shows further). */
const PAYLOAD_HEAD = 2_000;

// Every statement here starts from the predicate of `outbox_dead` (migration 0015): dead rows only,
// which are few, never a walk of the published history.
function matching(filter: DeadRowFilter) {
  return sql`o.dead_at IS NOT NULL AND o.published_at IS NULL
    ${filter.topic === undefined ? sql`` : sql`AND o.topic = ${filter.topic}`}
    ${filter.eventType === undefined ? sql`` : sql`AND o.event_type = ${filter.eventType}`}
    ${filter.kind === undefined ? sql`` : sql`AND ${deadRowKind("o")} = ${filter.kind}`}
    ${filter.olderThanSeconds === undefined ? sql`` : sql`AND o.dead_at <= now() - ${filter.olderThanSeconds} * interval '1 second'`}
    ${filter.ids === undefined ? sql`` : sql`AND o.id = ANY(${[...filter.ids]}::uuid[])`}
    ${filter.holdingKey === true ? sql`AND o.skipped_at IS NULL` : sql``}`;
}

/** The newest DEAD_ROWS_LISTED dead rows the filter matches, newest death first. */
export async function listDeadRows(db: Kysely<Database>, filter: DeadRowFilter): Promise<DeadRow[]> {
  const { rows } = await sql<{
    id: string;
    topic: string;
    event_type: string;
    ordering_key: string | null;
    kind: string;
    last_error: string | null;
    attempts: number;
    dead_at: Date;
    age: number;
    holds_key: boolean;
    headers: Record<string, string>;
    payload_head: string;
    payload_chars: number;
  }>`
    SELECT o.id, o.topic, o.event_type, o.ordering_key, ${deadRowKind("o")} AS kind, o.last_error, o.attempts,
           o.dead_at, extract(epoch FROM now() - o.dead_at)::float8 AS age, o.skipped_at IS NULL AS holds_key,
           o.headers, left(o.payload::text, ${PAYLOAD_HEAD}) AS payload_head,
           length(o.payload::text) AS payload_chars
    FROM outbox o
    WHERE ${matching(filter)}
    ORDER BY o.dead_at DESC
    LIMIT ${DEAD_ROWS_LISTED}
  `.execute(db);
  return rows.map((row) => ({
    id: row.id,
    topic: row.topic,
    eventType: row.event_type,
    orderingKey: row.ordering_key,
    kind: row.kind,
    lastError: row.last_error,
    attempts: row.attempts,
    deadAt: row.dead_at.toISOString(),
    ageSeconds: Math.max(0, Math.round(row.age)),
    holdsKey: row.holds_key,
    headers: row.headers,
    payloadHead: row.payload_head,
    payloadChars: row.payload_chars,
  }));
}

/** The dead rows the filter matches, counted by reason kind, largest group first. */
export async function deadRowGroups(db: Kysely<Database>, filter: DeadRowFilter): Promise<ReasonGroup[]> {
  const { rows } = await sql<{ kind: string; count: string }>`
    SELECT ${deadRowKind("o")} AS kind, count(*) AS count
    FROM outbox o
    WHERE ${matching(filter)}
    GROUP BY 1
    ORDER BY count(*) DESC, 1
  `.execute(db);
  return rows.map((row) => ({ kind: row.kind, count: Number(row.count) }));
}

/**
 * The ids of every dead row the filter matches (an action's preview: what it will change, named),
 * oldest first, at most `limit`.
 */
export async function deadRowIds(
  db: Kysely<Database>,
  filter: DeadRowFilter,
  limit: number,
): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT o.id FROM outbox o WHERE ${matching(filter)} ORDER BY o.dead_at LIMIT ${limit}
  `.execute(db);
  return rows.map((row) => row.id);
}
