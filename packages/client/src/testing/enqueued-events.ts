import { CompiledQuery, type QueryResult } from "kysely";
import type { EventMap } from "../consumer/handlers.js";
import type { PgQueryable } from "../outbox/enqueue-pg.js";

/**
 * An event as its outbox row holds it: what `enqueue` wrote, and what the relay will publish. A
 * claim-checked event's payload is its pointer, as the relay publishes it.
 */
export interface EnqueuedEvent<Type extends string = string, Payload = unknown> {
  readonly id: string;
  /** The relay's order (a bigint, as text): the order the rows were written in. */
  readonly seq: string;
  readonly topic: string;
  readonly type: Type;
  /** The ordering key; null without one. */
  readonly key: string | null;
  /** The payload as the message will carry it, parsed. */
  readonly payload: Payload;
  /** The payload's JSON text byte for byte: the message's body. */
  readonly payloadJson: string;
  /** The message attributes besides the event's id and type (`traceparent` when traced). */
  readonly headers: Readonly<Record<string, string>>;
  /** The due time `enqueue` was asked for (`deliverAt` / `delayMs`); null: at once. */
  readonly deliverAt: Date | null;
}

/** One event of `Events` (a `defineHandlers` event map): narrow it by its `type`. */
export type EnqueuedEventOf<Events extends EventMap> = {
  readonly [Type in keyof Events & string]: EnqueuedEvent<Type, Events[Type]>;
}[keyof Events & string];

/** Where the outbox's rows stood at a moment: events enqueued later are `after` it. */
export interface OutboxMark {
  readonly seq: string;
}

/** Which events `enqueuedEvents` returns; every field given must match. */
export interface EnqueuedFilter<Type extends string = string> {
  readonly type?: Type;
  readonly topic?: string;
  /** The ordering key; null: events without one. */
  readonly key?: string | null;
  /** Only these events (the ids `enqueue` returned). */
  readonly ids?: readonly string[];
  /** Only events written after the mark (`outboxMark`, taken before the code under test ran). */
  readonly after?: OutboxMark;
}

/** A kysely `Kysely` or `Transaction`, whatever its schema type: only its connection is used. */
export interface QueryExecutor {
  executeQuery<Row>(query: CompiledQuery<Row>): Promise<QueryResult<Row>>;
}

/** Where the outbox is read: a kysely `Kysely` or `Transaction`, or a pg client. */
export type OutboxReader = QueryExecutor | PgQueryable;

interface OutboxRowRead {
  readonly id: string;
  readonly seq: string;
  readonly topic: string;
  readonly ordering_key: string | null;
  readonly event_type: string;
  readonly payload_json: string;
  readonly headers: Record<string, string>;
  readonly deliver_at: Date | null;
}

async function rowsOf<Row>(reader: OutboxReader, text: string, values: unknown[]): Promise<Row[]> {
  if ("executeQuery" in reader) {
    const result = await reader.executeQuery(CompiledQuery.raw(text, values));
    return result.rows as Row[];
  }
  const result = await reader.query(text, values);
  return result.rows as Row[];
}

/**
 * The outbox's rows now: pass the mark as `after` to see only the events written since. The identity
 * sequence behind `seq`, not the rows: its last value counts rows still uncommitted elsewhere, which
 * would otherwise show up as "after" once they commit.
 */
export async function outboxMark(reader: OutboxReader): Promise<OutboxMark> {
  const [row] = await rowsOf<{ seq: string }>(
    reader,
    `SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('outbox', 'seq')), 0)::text AS seq`,
    [],
  );
  if (row === undefined) throw new Error("reading the outbox's sequence returned no row");
  return { seq: row.seq };
}

/**
 * The events in the outbox that `filter` matches, in the order they were written, as the rows hold
 * them: read through `reader`, so inside a transaction it sees that transaction's own uncommitted
 * events. Whatever enqueued them (`enqueue`, `enqueueWith`, your own SQL), these are the rows the
 * relay will publish. `Events` types each event by its type, as `defineHandlers` does; the payload
 * is trusted, not checked.
 */
export async function enqueuedEvents<Events extends EventMap = Record<string, unknown>>(
  reader: OutboxReader,
  filter: EnqueuedFilter<keyof Events & string> = {},
): Promise<EnqueuedEventOf<Events>[]> {
  // One statement whatever the filter: a condition whose parameter is NULL matches every row.
  // `payload::text` is the json column's text as written, the bytes the relay publishes.
  const rows = await rowsOf<OutboxRowRead>(
    reader,
    `SELECT id::text AS id, seq::text AS seq, topic, ordering_key, event_type,
            payload::text AS payload_json, headers, deliver_at
       FROM outbox
      WHERE ($1::text IS NULL OR event_type = $1)
        AND ($2::text IS NULL OR topic = $2)
        AND (NOT $3::boolean OR ordering_key IS NOT DISTINCT FROM $4::text)
        AND ($5::uuid[] IS NULL OR id = ANY ($5::uuid[]))
        AND seq > $6::bigint
      ORDER BY seq`,
    [
      filter.type ?? null,
      filter.topic ?? null,
      filter.key !== undefined,
      filter.key ?? null,
      filter.ids === undefined ? null : [...filter.ids],
      filter.after?.seq ?? "0",
    ],
  );
  return rows.map(
    (row) =>
      ({
        id: row.id,
        seq: row.seq,
        topic: row.topic,
        type: row.event_type,
        key: row.ordering_key,
        payload: JSON.parse(row.payload_json),
        payloadJson: row.payload_json,
        headers: row.headers,
        deliverAt: row.deliver_at,
      }) as EnqueuedEventOf<Events>,
  );
}
