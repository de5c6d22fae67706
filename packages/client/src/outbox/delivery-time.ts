import { sql } from "kysely";
import type { NewOutboxRow } from "../db/schema.js";

/**
 * How far ahead an event may be scheduled: 7 days. A scheduled row waits in the outbox, and as its
 * key's head it holds the key's later events back for all that time (the relay keeps per-key order);
 * a horizon of weeks or months belongs in a schedule of the application's own, which enqueues closer
 * to the time. The bound also catches a unit slip, such as an epoch timestamp passed as `delayMs`.
 */
export const MAX_DELIVERY_DELAY_MS = 7 * 24 * 60 * 60 * 1_000;

/**
 * When the relay may publish the event: not before `deliverAt`, or `delayMs` after the enqueue;
 * neither is "at once". At most 7 days ahead.
 */
export type DeliveryTime =
  | {
      /**
       * Not published before this instant. Compared with the database's clock, so the app's clock
       * skew shifts it (a clock 2 s fast publishes 2 s late by the database's). In the past: at once.
       */
      readonly deliverAt?: Date;
      readonly delayMs?: undefined;
    }
  | {
      /**
       * Not published before this many milliseconds after the INSERT, on the database's clock
       * (`statement_timestamp()`): no skew between the app and the relay.
       */
      readonly delayMs?: number;
      readonly deliverAt?: undefined;
    };

/** Why the event's delivery time cannot be used, or `undefined` when it can (or has none). */
export function deliveryTimeProblem(event: DeliveryTime): string | undefined {
  const { deliverAt, delayMs } = event;
  if (deliverAt !== undefined && delayMs !== undefined) return "give deliverAt or delayMs, not both";
  const limit = `${MAX_DELIVERY_DELAY_MS} ms (7 days)`;
  if (delayMs !== undefined) {
    if (typeof delayMs !== "number" || !Number.isFinite(delayMs))
      return `delayMs must be a finite number of milliseconds, got ${String(delayMs)}`;
    if (delayMs < 0) return `delayMs must not be negative, got ${delayMs}`;
    if (delayMs > MAX_DELIVERY_DELAY_MS) return `delayMs must be at most ${limit}, got ${delayMs}`;
  }
  if (deliverAt !== undefined) {
    if (!(deliverAt instanceof Date) || !Number.isFinite(deliverAt.getTime()))
      return `deliverAt must be a valid Date, got ${String(deliverAt)}`;
    // By this process's clock: the bound is a week, so a skew of seconds does not matter to it.
    const aheadMs = deliverAt.getTime() - Date.now();
    if (aheadMs > MAX_DELIVERY_DELAY_MS)
      return `deliverAt must be at most ${limit} ahead, got ${deliverAt.toISOString()} (${Math.round(aheadMs)} ms ahead)`;
  }
  return undefined;
}

/**
 * The row's due time: `available_at`, which the claim compares with `now()`, and `deliver_at`, which
 * keeps the time asked for (migration 0012). None for an event without one: the defaults (now()).
 * Check `deliveryTimeProblem` first.
 */
export function deliveryColumns(event: DeliveryTime): Pick<NewOutboxRow, "available_at" | "deliver_at"> {
  if (event.deliverAt !== undefined) return { available_at: event.deliverAt, deliver_at: event.deliverAt };
  if (event.delayMs === undefined) return {};
  // statement_timestamp(), not now(): the delay counts from the INSERT, not from the start of a
  // transaction that may have been open a while. One value per statement, so both columns agree.
  const due = sql<Date>`statement_timestamp() + ${event.delayMs}::float8 * interval '1 millisecond'`;
  return { available_at: due, deliver_at: due };
}
