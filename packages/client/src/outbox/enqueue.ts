import type { Kysely } from "kysely";
import type { ClaimCheck } from "../claim-check/claim-check.js";
import {
  type ClaimedPayload,
  claimedMessage,
  reservedHeaderProblem,
  storeClaimed,
} from "../claim-check/claimed-message.js";
import type { DatabaseOf, KyselyInstance, NewOutboxRow, OutboxDatabase, OutboxTables } from "../db/schema.js";
import { describeError } from "../log/describe-error.js";
import { type DeliveryTime, deliveryColumns, deliveryTimeProblem } from "./delivery-time.js";
import type { EnqueueOptions } from "./enqueue-options.js";
import { type EnqueueSpan, enqueueTracing } from "./enqueue-span.js";
import { type MessageLimit, messageLimit } from "./message-limit.js";
import { inKeyLockOrder } from "./ordering-key-lock.js";
import { insertRuns, outboxInsert, POSTGRES_MAX_PARAMETERS, rowParameters } from "./outbox-insert.js";
import { headersProblem, measureMessage, messageAttributes } from "./sns-message.js";
import { uuidv7 } from "./uuidv7.js";

const topicPattern = /^[A-Za-z0-9_.:-]{1,256}$/;
const eventTypePattern = /^[A-Za-z0-9_.:/-]{1,256}$/;
const canonicalUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface EventFields {
  /** Logical destination, mapped to a topic ARN by the relay's config. */
  readonly topic: string;
  readonly eventType: string;
  /**
   * Events sharing a key are published in the order they committed, and those of one transaction in
   * the order they were given. A transaction holds each key it enqueued until it ends: another
   * producer's enqueue of the same key waits for it (docs/relay.md, "Order per key").
   */
  readonly orderingKey?: string | null;
  /**
   * Propagated as message attributes. With tracing on, `enqueue` sets `traceparent` (and `tracestate`)
   * itself, to its own span's, unless they would not fit beside these; without, a `traceparent` given
   * here travels as it is.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /** Defaults to a fresh UUIDv7; pass one to make the enqueue itself idempotent. */
  readonly id?: string;
}

/**
 * One event. The message published is exactly the payload's JSON text as written here:
 * `JSON.stringify(payload)`, or `payloadJson` byte for byte (whitespace, key order and all).
 */
export type NewEvent = EventFields &
  DeliveryTime &
  (
    | { readonly payload: unknown; readonly payloadJson?: undefined }
    | {
        /** The payload as JSON text, instead of `payload`: for bytes that must travel unchanged. */
        readonly payloadJson: string;
        readonly payload?: undefined;
      }
  );

export class OutboxValidationError extends Error {
  override readonly name = "OutboxValidationError";
  constructor(
    /** Position of the offending event in the array given to `enqueue`. */
    readonly index: number,
    reason: string,
  ) {
    super(`event #${index}: ${reason}`);
  }
}

/** The payload's JSON text: what the outbox stores verbatim and the relay publishes. */
function payloadText(event: NewEvent, index: number): string {
  if (event.payloadJson === undefined) {
    const json = JSON.stringify(event.payload);
    if (json === undefined) throw new OutboxValidationError(index, "payload must be JSON-serialisable");
    return json;
  }
  try {
    JSON.parse(event.payloadJson);
  } catch (error) {
    throw new OutboxValidationError(index, `payloadJson is not valid JSON: ${(error as Error).message}`);
  }
  return event.payloadJson;
}

/**
 * A UUID in the form Postgres hands it back (lowercase, hyphenated), which is the `event_id` the relay
 * sends: braces or missing hyphens in the caller's id must not change the measured size.
 */
function storedUuid(id: string): string {
  if (canonicalUuid.test(id)) return id;
  const hex = id
    .replace(/^\{(.*)\}$/, "$1")
    .replaceAll("-", "")
    .toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) return id; // not a UUID: the insert refuses it
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** What an event's row stores: its message text and headers, and the payload to claim-check, if any. */
interface CheckedEvent {
  readonly json: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly claimed?: ClaimedPayload;
}

/**
 * Checks an event the way the relay will, so an accepted event is one it can publish; returns what
 * its row stores. `headers` are the ones stored, trace headers included: they count against SNS's
 * limits too. Over the size limit, with a claim check, the message is the pointer instead, checked
 * the same way.
 */
function validate(
  event: NewEvent,
  eventId: string,
  headers: Readonly<Record<string, string>>,
  index: number,
  limit: MessageLimit,
  claimCheck: ClaimCheck | undefined,
): CheckedEvent {
  if (!topicPattern.test(event.topic)) {
    throw new OutboxValidationError(
      index,
      `topic must match ${topicPattern}, got ${JSON.stringify(event.topic)}`,
    );
  }
  if (!eventTypePattern.test(event.eventType)) {
    throw new OutboxValidationError(
      index,
      `eventType must match ${eventTypePattern}, got ${JSON.stringify(event.eventType)}`,
    );
  }
  const json = payloadText(event, index);
  const badDeliveryTime = deliveryTimeProblem(event);
  if (badDeliveryTime !== undefined) throw new OutboxValidationError(index, badDeliveryTime);
  const reserved = reservedHeaderProblem(event.headers ?? {});
  if (reserved !== undefined) throw new OutboxValidationError(index, reserved);
  const badHeaders = headersProblem(headers);
  if (badHeaders !== undefined) throw new OutboxValidationError(index, badHeaders);
  const topicLimit = limit(event.topic);
  const { problem } = measureMessage(json, messageAttributes(eventId, event.eventType, headers), topicLimit);
  if (problem === undefined) return { json, headers };
  if (claimCheck === undefined) throw new OutboxValidationError(index, problem);
  const claimed = claimedMessage(claimCheck, json, headers);
  const pointerProblem =
    headersProblem(claimed.headers) ??
    measureMessage(claimed.json, messageAttributes(eventId, event.eventType, claimed.headers), topicLimit)
      .problem;
  if (pointerProblem !== undefined) {
    throw new OutboxValidationError(index, `claim-checked, the message is still refused: ${pointerProblem}`);
  }
  return claimed;
}

/**
 * The event's payload text and the headers its row stores. Trace headers count against SNS's limits
 * like any other; when they alone would push an event over one (too many headers, too many bytes),
 * the event is stored without them rather than refused: turning tracing on must not refuse an event
 * that is accepted with it off. Its trace then ends at the enqueue span, which says so.
 */
function checked(
  event: NewEvent,
  eventId: string,
  traced: EnqueueSpan,
  index: number,
  limit: MessageLimit,
  claimCheck: ClaimCheck | undefined,
): CheckedEvent {
  if (!traced.traced) return validate(event, eventId, traced.headers, index, limit, claimCheck);
  try {
    return validate(event, eventId, traced.headers, index, limit, claimCheck);
  } catch (error) {
    const given = event.headers ?? {};
    // Throws again if the event does not fit even without the trace headers: the caller's problem.
    const withoutTrace = validate(event, eventId, given, index, limit, claimCheck);
    traced.span.addEvent("trace context not stored", {
      reason: describeError(error),
    });
    return withoutTrace;
  }
}

/**
 * Adds events to the outbox inside the caller's transaction, so they commit or roll back with the
 * business change that produced them. One multi-row INSERT, or several in a row when the events
 * take more parameters than one Postgres statement can (about 9 000 events each). Returns the event ids.
 * Each event gets a PRODUCER span (a no-op unless `@opentelemetry/api` is installed and an SDK
 * registered), whose trace context is stored with the row for the relay and the consumer to carry on.
 * `trx` is the application's own `Transaction<DB>` (or `Kysely<DB>`, or `ControlledTransaction<DB>`),
 * of any schema type whose `outbox` table takes the rows `enqueue` writes ({@link OutboxDatabase}):
 * ours or kysely-codegen's alike.
 * `options.maxMessageBytes` raises (or lowers) the size limit per topic, for topics whose SNS
 * `MaximumMessageSize` is not the default 262 144.
 */
export async function enqueue<Trx extends KyselyInstance>(
  trx: Trx & OutboxDatabase<DatabaseOf<Trx>>,
  events: readonly NewEvent[],
  options?: EnqueueOptions,
): Promise<string[]> {
  // kysely's types are invariant in DB, so a generic DB cannot name the outbox's columns;
  // OutboxDatabase is what guarantees the table takes these rows, and only it is written.
  const outbox = trx as unknown as Kysely<OutboxTables>;
  return enqueueRows(
    events,
    async (rows) => {
      for (const run of insertRuns(rows)) await outboxInsert(outbox, run).execute();
    },
    options,
    "runs",
  );
}

/**
 * `enqueue`, with the caller writing the rows in a statement of its own: the outbox INSERT as the last
 * part of a CTE that also writes the business rows makes the whole change one round trip, e.g.
 * `trx.with("photo", (db) => db.insertInto("photos").values(photo)).insertInto("outbox").values(rows)`.
 * The events are checked and their spans started before `write` runs; nothing is written when a
 * check fails. With `options.claimCheck`, the payloads over the limit are stored before `write` runs:
 * a row never commits without its object (an object whose row rolls back is garbage the bucket's
 * lifecycle expires). The caller's one statement must take every row: more than
 * POSTGRES_MAX_PARAMETERS parameters of rows is an OutboxValidationError (`enqueue` splits them).
 */
export function enqueueWith(
  events: readonly NewEvent[],
  write: (rows: NewOutboxRow[]) => Promise<unknown>,
  options?: EnqueueOptions,
): Promise<string[]> {
  return enqueueRows(events, write, options, "one statement");
}

/**
 * The event, in the caller's order, at which `rows` no longer fit one statement's parameters; -1
 * when they all do.
 */
function firstOverParameterLimit(rows: readonly NewOutboxRow[]): number {
  let parameters = 0;
  return rows.findIndex((row) => {
    parameters += rowParameters(row);
    return parameters > POSTGRES_MAX_PARAMETERS;
  });
}

/**
 * enqueueWith's work. `write` takes the rows in one statement ("one statement": refused beyond
 * POSTGRES_MAX_PARAMETERS, before anything is stored or written) or in as many as it needs ("runs").
 */
export async function enqueueRows(
  events: readonly NewEvent[],
  write: (rows: NewOutboxRow[]) => Promise<unknown>,
  options: EnqueueOptions | undefined,
  statements: "one statement" | "runs",
): Promise<string[]> {
  const limit = messageLimit(options?.maxMessageBytes);
  if (events.length === 0) return [];
  const tracing = await enqueueTracing();
  const claimCheck = options?.claimCheck;
  try {
    const claimed: ClaimedPayload[] = [];
    const rows = events.map((event, index): NewOutboxRow => {
      const id = event.id ?? uuidv7();
      const eventId = storedUuid(id);
      const traced = tracing.start(event, eventId);
      const { json, headers, claimed: payload } = checked(event, eventId, traced, index, limit, claimCheck);
      if (payload !== undefined) claimed.push(payload);
      return {
        id,
        topic: event.topic,
        ordering_key: event.orderingKey ?? null,
        event_type: event.eventType,
        // The `json` column keeps this text as it is: the relay publishes these very bytes.
        payload: json,
        headers: JSON.stringify(headers),
        ...deliveryColumns(event),
      };
    });
    const over = statements === "one statement" ? firstOverParameterLimit(rows) : -1;
    if (over >= 0) {
      throw new OutboxValidationError(
        over,
        `${events.length} events take more than Postgres's ${POSTGRES_MAX_PARAMETERS} parameters in one statement: write them in smaller calls of enqueueWith (enqueue and enqueuePg split them themselves)`,
      );
    }
    if (claimCheck !== undefined && claimed.length > 0) await storeClaimed(claimCheck, claimed);
    // Written in the order the insert trigger takes their keys' locks (migration 0014), so that two
    // transactions enqueuing overlapping keys cannot deadlock; the ids are returned as given.
    await write(inKeyLockOrder(rows));
    tracing.end();
    return rows.map((row) => row.id);
  } catch (error) {
    tracing.fail(error);
    throw error;
  }
}
