import type { BatchHandler, EventHandler, HandlerSet } from "@outbox/client";
import { describeError, isBatchHandler } from "@outbox/client/internal";
import { PoisonReason } from "../errors.js";
import type { DecodedMessage } from "./decode.js";

/** The handler an event goes to, with its payload as that handler's `parse` returned it. */
export interface FoundHandler<DB> {
  /** One event at a time: a batch handler's is a one-event batch (its fallback, and on FIFO queues). */
  readonly handle: EventHandler<string, unknown, DB>;
  readonly payload: unknown;
  /** Set when the event's handler takes batches: events sharing it may run in one transaction. */
  readonly batch?: BatchHandler<string, unknown, DB>;
}

/**
 * Picks the handler of a decoded message's event type and checks its payload, or says why the
 * message is poison: no handler for the type, or a payload its `parse` refuses. Either way retrying
 * cannot help, so nothing here throws.
 */
export function findHandler<DB>(
  handlers: HandlerSet<DB>,
  decoded: DecodedMessage,
): FoundHandler<DB> | PoisonReason {
  const entry = handlers.find(decoded.eventType);
  if (entry === undefined) {
    return new PoisonReason("unknown_event_type", `no handler for the event type "${decoded.eventType}"`);
  }
  if (typeof entry === "function") return { handle: entry, payload: decoded.payload };
  let payload: unknown;
  try {
    payload = entry.parse === undefined ? decoded.payload : entry.parse(decoded.payload);
  } catch (error) {
    return new PoisonReason("payload_rejected", describeError(error));
  }
  if (!isBatchHandler(entry)) return { handle: entry.handle, payload };
  return { handle: (event, context) => entry.handleBatch([event], context), payload, batch: entry };
}
