import type { NewOutboxRow } from "@outbox/client";
import { CompiledQuery, type Insertable, type Kysely } from "kysely";
import type { Database, GearLinkState, PhotosTable } from "./schema.js";

/**
 * POST /photos's three rows in one statement (data-modifying CTEs), so one round trip: the request's
 * cost is mostly round trips, and the outbox row should not add one of its own. The link's foreign key
 * is checked at the end of the statement, when the photo row is there. The link's first attempt is due
 * on the database's clock, the one reconciliation compares with (`$7` ms from now: 0 for a link born
 * linked, which reconciliation never reads).
 *
 * Written out once rather than built by Kysely per request: building and compiling this statement
 * took 20–30 µs of the request's CPU every time for the same text. The pool's client prepares it once
 * per connection, by this text. The outbox columns are those of an event due at once (see
 * {@link insertPostedPhoto}).
 */
const INSERT_PHOTO_LINK_AND_EVENT = `WITH photo AS (
    INSERT INTO photos (id, title, idempotency_key, idempotency_response) VALUES ($1, $2, $3, $4)
  ), link AS (
    INSERT INTO photo_gear_links (photo_id, gear_ids, state, next_attempt_at)
    VALUES ($1, $5, $6, now() + $7::float8 * interval '1 millisecond')
  )
  INSERT INTO outbox (id, topic, ordering_key, event_type, payload, headers)
  VALUES ($8, $9, $10, $11, $12, $13)`;

/** The photo row, as the statement writes it (`created_at` is the database's). */
export type PostedPhotoRow = Required<
  Pick<Insertable<PhotosTable>, "id" | "title" | "idempotency_key" | "idempotency_response">
>;

export interface PostedLinkRow {
  /** The gear ids as JSON text (the `jsonb` column's input). */
  readonly gearIdsJson: string;
  readonly state: GearLinkState;
  /** How long the request's own link attempt owns a pending link before reconciliation may retry it. */
  readonly firstAttemptInMs: number;
}

/**
 * Writes `photo`, its link and its event (the one row `enqueueWith` hands its writer) in the request's
 * transaction. Refuses anything else: more rows, or an event with a due time, whose columns are not in
 * this statement (dropping them would publish the event at once).
 */
export async function insertPostedPhoto(
  trx: Kysely<Database>,
  photo: PostedPhotoRow,
  link: PostedLinkRow,
  events: readonly NewOutboxRow[],
): Promise<void> {
  const [event] = events;
  if (
    event === undefined ||
    events.length > 1 ||
    event.available_at !== undefined ||
    event.deliver_at !== undefined
  )
    throw new Error("the photo's statement writes one event, due at once");
  await trx.executeQuery(
    CompiledQuery.raw(INSERT_PHOTO_LINK_AND_EVENT, [
      photo.id,
      photo.title,
      photo.idempotency_key,
      photo.idempotency_response,
      link.gearIdsJson,
      link.state,
      link.firstAttemptInMs,
      event.id,
      event.topic,
      event.ordering_key ?? null,
      event.event_type,
      event.payload,
      event.headers,
    ]),
  );
}
