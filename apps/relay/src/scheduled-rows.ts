import { type RawBuilder, sql } from "kysely";

/**
 * A scheduled row not due yet (`enqueue`'s `deliverAt` / `delayMs`, migration 0012). Stated as the
 * predicate of the partial index `outbox_scheduled` plus the range `deliver_at > now()`, so every query
 * about such rows is a range scan of that index, which holds only scheduled rows still pending. A row
 * whose due time has passed is no longer scheduled, whatever holds it back since (its key, a backoff).
 * `row` is the alias of the outbox row the query tests.
 */
export function notDueYet(row: string): RawBuilder<boolean> {
  const column = (name: string) => sql.ref(`${row}.${name}`);
  return sql<boolean>`${column("deliver_at")} IS NOT NULL AND ${column("published_at")} IS NULL AND ${column("dead_at")} IS NULL AND ${column("deliver_at")} > now()`;
}
