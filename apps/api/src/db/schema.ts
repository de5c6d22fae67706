import type { OutboxTables } from "@outbox/client";
import type { ColumnType, Generated } from "kysely";

/** JSON columns: written as JSON text (serialised once, by us), read back parsed by pg. */
type Json<T> = ColumnType<T, string, string>;
/** Timestamps the database fills in by default. */
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

/** The photo service's photos. */
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

/**
 * The tables the service reads and writes (./migrations). Its 0005 also creates `photo_feed`, which
 * only the consumer demo's `photo.posted` handler writes (its type is there). A type, not an
 * interface: kysely's `withTables` wants an index-compatible record.
 */
export type PhotoTables = {
  photos: PhotosTable;
  photo_gear_links: PhotoGearLinksTable;
};

/** The photo service's database: its own tables and the outbox it enqueues into. */
export interface Database extends OutboxTables, PhotoTables {}
