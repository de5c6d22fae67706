import type { ColumnType, Expression, Generated, Insertable, Selectable } from "kysely";

/** JSON columns: written as JSON text (serialised once, by us), read back parsed by pg. */
type Json<T> = ColumnType<T, string, string>;
/** Timestamps the database fills in by default. */
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/**
 * A due time, written as a Date or as an SQL expression the INSERT evaluates: `enqueue`'s `delayMs`
 * counts on the database's clock, the one the relay's claim compares with.
 */
type DueTimestamp = ColumnType<Date, Date | string | Expression<Date> | undefined, Date | string>;
type NullableDueTimestamp = ColumnType<
  Date | null,
  Date | string | Expression<Date> | null | undefined,
  Date | string | null
>;

export interface OutboxTable {
  /** The event id (UUIDv7), the dedup key downstream. */
  id: string;
  /** Relay order; bigint arrives as a string so no precision is lost. */
  seq: ColumnType<string, never, never>;
  /** Logical destination; the relay maps it to a topic ARN. */
  topic: string;
  /** Rows sharing a key publish in `seq` order, one at a time (FIFO MessageGroupId). */
  ordering_key: string | null;
  event_type: string;
  /** A `json` column, not `jsonb`: it keeps the caller's bytes, which are what the relay publishes. */
  payload: Json<unknown>;
  headers: ColumnType<Record<string, string>, string | undefined, string>;
  created_at: DefaultedTimestamp;
  attempts: Generated<number>;
  /** Not claimed before this: the due time of a delayed event, or the end of a retry's backoff. */
  available_at: DueTimestamp;
  /** The due time `enqueue` was asked for (`deliverAt` / `delayMs`); null: at once. */
  deliver_at: NullableDueTimestamp;
  locked_until: NullableTimestamp;
  locked_by: string | null;
  published_at: NullableTimestamp;
  dead_at: NullableTimestamp;
  /** A dead row an operator skipped (`relay skip-dead`): it no longer holds its ordering key back. */
  skipped_at: NullableTimestamp;
  last_error: string | null;
}

export interface InboxTable {
  /** Which consumer processed the event: several consumers may each see the same event once. */
  consumer: string;
  event_id: string;
  message_id: string;
  received_at: DefaultedTimestamp;
  processed_at: DefaultedTimestamp;
}

/**
 * The tables the migrations create. An application's own schema type extends it (`interface
 * AppDatabase extends OutboxTables { orders: OrdersTable }`): `enqueue` and the handlers take any
 * `Kysely<DB>` whose `DB` has these.
 */
export interface OutboxTables {
  outbox: OutboxTable;
  inbox: InboxTable;
}

export type OutboxRow = Selectable<OutboxTable>;
export type NewOutboxRow = Insertable<OutboxTable>;
export type InboxRow = Selectable<InboxTable>;
