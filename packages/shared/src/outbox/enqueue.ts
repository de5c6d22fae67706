import type { Kysely, Transaction } from "kysely";
import type { Database } from "../db/schema.js";
import { uuidv7 } from "./uuidv7.js";

/** SNS's limit for one message; a larger payload could never be published. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

const topicPattern = /^[A-Za-z0-9_.:-]{1,256}$/;
const eventTypePattern = /^[A-Za-z0-9_.:/-]{1,256}$/;

export interface NewEvent {
  /** Logical destination, mapped to a topic ARN by the relay's config. */
  readonly topic: string;
  readonly eventType: string;
  readonly payload: unknown;
  /** Events sharing a key are delivered in the order they were enqueued. */
  readonly orderingKey?: string | null;
  /** Propagated as message attributes, e.g. `traceparent`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Defaults to a fresh UUIDv7; pass one to make the enqueue itself idempotent. */
  readonly id?: string;
}

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

function validate(event: NewEvent, index: number): string {
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
  const json = JSON.stringify(event.payload);
  if (json === undefined) throw new OutboxValidationError(index, "payload must be JSON-serialisable");
  const bytes = Buffer.byteLength(json);
  if (bytes > MAX_PAYLOAD_BYTES) {
    throw new OutboxValidationError(
      index,
      `payload is ${bytes} bytes, over the ${MAX_PAYLOAD_BYTES}-byte SNS limit`,
    );
  }
  return json;
}

/**
 * Adds events to the outbox inside the caller's transaction, so they commit or roll back with the
 * business change that produced them. One multi-row INSERT whatever the count. Returns the event ids.
 */
export async function enqueue(
  trx: Transaction<Database> | Kysely<Database>,
  events: readonly NewEvent[],
): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = events.map((event, index) => {
    const payloadJson = validate(event, index);
    return {
      id: event.id ?? uuidv7(),
      topic: event.topic,
      ordering_key: event.orderingKey ?? null,
      event_type: event.eventType,
      // Already serialised for the size check; pg would serialise it again otherwise.
      payload: payloadJson,
      headers: JSON.stringify(event.headers ?? {}),
    };
  });
  await trx.insertInto("outbox").values(rows).execute();
  return rows.map((row) => row.id);
}
