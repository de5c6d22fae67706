import type { ColumnType, Generated, Insertable, Selectable } from "kysely";

/** JSON columns: written as JSON text (serialised once, by us), read back parsed by pg. */
type Json<T> = ColumnType<T, string, string>;
/** Timestamps the database fills in by default. */
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

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
  available_at: DefaultedTimestamp;
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

/** The photo service's photos (apps/api). */
export interface PhotosTable {
  id: string;
  title: string;
  created_at: DefaultedTimestamp;
  /** The client's Idempotency-Key of the POST that created the photo (unique), if it sent one. */
  idempotency_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** The body that POST answered, replayed to its repeats; NULL until it has answered. */
  idempotency_response: ColumnType<
    { id: string; gearLink: GearLinkState } | null,
    string | null | undefined,
    string | null
  >;
}

export type GearLinkState = "pending" | "linked";

/** One per photo: the gear to link at the equipment service, and whether that has been confirmed. */
export interface PhotoGearLinksTable {
  photo_id: string;
  gear_ids: Json<string[]>;
  state: GearLinkState;
  attempts: Generated<number>;
  /** A pending link is not retried before this (backoff, or the request still trying it). */
  next_attempt_at: DefaultedTimestamp;
  last_error: string | null;
  linked_at: NullableTimestamp;
}

/** The consumer's effect of `photo.posted`: one row per event. */
export interface PhotoFeedTable {
  event_id: string;
  photo_id: string;
  title: string;
  added_at: DefaultedTimestamp;
}

export interface Database {
  outbox: OutboxTable;
  inbox: InboxTable;
  photos: PhotosTable;
  photo_gear_links: PhotoGearLinksTable;
  photo_feed: PhotoFeedTable;
}

export type OutboxRow = Selectable<OutboxTable>;
export type NewOutboxRow = Insertable<OutboxTable>;
export type InboxRow = Selectable<InboxTable>;
