import type { Transaction } from "kysely";
import type { OutboxTables } from "../db/schema.js";
import type { Deadline } from "../deadline/deadline.js";
import type { ClientLogger } from "../log/client-logger.js";
import { MAX_BATCH_ENTRIES } from "../outbox/message-contract.js";

/** One event as the relay published it, decoded from either an SNS envelope or a raw delivery. */
export interface ConsumedEvent<Type extends string = string, Payload = unknown> {
  /** The outbox row's id: the dedup key (a re-publish gets a new SQS MessageId, never a new event id). */
  readonly id: string;
  readonly type: Type;
  readonly payload: Payload;
  /** Every other string message attribute, e.g. `traceparent`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly messageId: string;
  /** SQS ApproximateReceiveCount: 1 on the first delivery. */
  readonly receiveCount: number;
}

export interface HandlerContext<DB = OutboxTables> {
  /**
   * The inbox transaction. Write the effect through it: it commits together with the inbox row, so the
   * effect happens exactly once. It fails once the deadline passed (the transaction is rolled back).
   * Never end it (COMMIT, ROLLBACK, ABORT, in any statement): the consumer checks before its own
   * COMMIT that the transaction is still the one it opened, and sends the message of a handler that
   * ended it to the DLQ as `handler_left_transaction`. A kysely `Transaction`, so it goes wherever the
   * application's code takes one (`trx.transaction()` on it throws, as on any kysely `Transaction`).
   */
  readonly trx: Transaction<DB>;
  /** Visibility-based deadline: pass it to `deadlineFetch` so downstream calls stop when we must. */
  readonly deadline: Deadline;
  /** Carries the event id, type and message id (the consumer's pino logger). */
  readonly log: ClientLogger;
}

export type EventHandler<Type extends string, Payload, DB> = (
  event: ConsumedEvent<Type, Payload>,
  context: HandlerContext<DB>,
) => Promise<void>;

/** A handler with a payload check: `parse` throwing makes the message poison (e.g. `schema.parse`). */
export interface ParsingHandler<Type extends string, Payload, DB> {
  readonly parse: (payload: unknown) => Payload;
  readonly handle: EventHandler<Type, Payload, DB>;
}

/**
 * Up to `maxBatchSize` events of one type from one receive, handled in one inbox transaction: one
 * round trip claims all their inbox rows, and `handleBatch` sees only the events not processed
 * before. If the batch fails, each of its events is handled again on its own (a one-event batch),
 * so a poison event goes to the DLQ alone and the others still commit exactly once.
 */
export interface BatchHandler<Type extends string, Payload, DB> {
  /** Events per transaction, 1–10 (SQS receives at most 10 at a time). */
  readonly maxBatchSize: number;
  /** As a ParsingHandler's: throwing makes that one message poison, before any batch is formed. */
  readonly parse?: (payload: unknown) => Payload;
  readonly handleBatch: (
    events: readonly ConsumedEvent<Type, Payload>[],
    context: HandlerContext<DB>,
  ) => Promise<void>;
}

export type HandlerEntry<Type extends string, Payload, DB> =
  | EventHandler<Type, Payload, DB>
  | ParsingHandler<Type, Payload, DB>
  | BatchHandler<Type, Payload, DB>;

/** Whether a handler entry takes its events in batches. */
export function isBatchHandler<Type extends string, Payload, DB>(
  entry: HandlerEntry<Type, Payload, DB>,
): entry is BatchHandler<Type, Payload, DB> {
  return typeof entry === "object" && "handleBatch" in entry;
}

/**
 * A batch handler entry for `defineHandlers`, checked at definition: `maxBatchSize` (default 10)
 * must be an integer from 1 to 10. Its events are typed by the event map of `defineHandlers`.
 */
export function defineBatchHandler<Type extends string, Payload, DB>(
  handler: Omit<BatchHandler<Type, Payload, DB>, "maxBatchSize"> & { readonly maxBatchSize?: number },
): BatchHandler<Type, Payload, DB> {
  const maxBatchSize = handler.maxBatchSize ?? MAX_BATCH_ENTRIES;
  if (!Number.isInteger(maxBatchSize) || maxBatchSize < 1 || maxBatchSize > MAX_BATCH_ENTRIES) {
    throw new RangeError(
      `maxBatchSize must be an integer from 1 to ${MAX_BATCH_ENTRIES}, got ${maxBatchSize}`,
    );
  }
  return { ...handler, maxBatchSize };
}

/** Event type → payload type, e.g. `{ "order.placed": { orderId: string } }` (an interface is fine). */
export type EventMap = object;

export type HandlerMap<Events extends EventMap, DB> = {
  readonly [Type in keyof Events & string]: HandlerEntry<Type, Events[Type], DB>;
};

/** What the consumer's `createConsumer` and CONSUMER_HANDLERS_MODULE (as its default export) take. */
export interface HandlerSet<DB = OutboxTables> {
  /** Looks up the handler of an event type; undefined means poison (no handler, no fallback). */
  find(type: string): HandlerEntry<string, unknown, DB> | undefined;
  readonly types: readonly string[];
}

export interface HandlerSetOptions<DB> {
  /** Takes every event type without a handler of its own; without it such events are poison. */
  readonly fallback?: HandlerEntry<string, unknown, DB>;
}

/**
 * Typed handlers keyed by event type. The payload type of each handler comes from `Events`; with
 * `parse` it is also checked at run time, otherwise it is trusted as the relay wrote it.
 */
export function defineHandlers<Events extends EventMap, DB = OutboxTables>(
  handlers: HandlerMap<Events, DB>,
  options: HandlerSetOptions<DB> = {},
): HandlerSet<DB> {
  const byType = new Map<string, HandlerEntry<string, unknown, DB>>(
    Object.entries(handlers) as [string, HandlerEntry<string, unknown, DB>][],
  );
  return {
    types: [...byType.keys()],
    find: (type) => byType.get(type) ?? options.fallback,
  };
}

/**
 * What marks a PoisonMessageError, under a key every copy of this package in a process shares
 * (`Symbol.for`): a handlers module bundled with its own copy of @outbox/client throws errors the
 * consumer's copy cannot recognise by `instanceof` (two copies, two classes), but by this brand.
 */
const POISON_BRAND = Symbol.for("@outbox/client.PoisonMessageError");

/**
 * Thrown by a handler (or its `parse`) for a message that can never succeed, e.g. a payload that
 * violates the contract: the transaction rolls back and the message goes to the DLQ at once instead
 * of burning its retries. Recognised by {@link isPoisonMessageError}, whichever copy of this
 * package made it.
 */
export class PoisonMessageError extends Error {
  override readonly name = "PoisonMessageError";
  readonly [POISON_BRAND] = true;
}

/**
 * Whether `value` is a PoisonMessageError from any copy of @outbox/client: use it rather than
 * `instanceof` wherever the error may come from another copy (a bundled handlers module).
 */
export function isPoisonMessageError(value: unknown): value is PoisonMessageError {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { readonly [POISON_BRAND]?: unknown })[POISON_BRAND] === true
  );
}
