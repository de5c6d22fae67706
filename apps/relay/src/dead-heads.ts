import { type RawBuilder, sql } from "kysely";

/**
 * A dead row that still holds its key (nobody ran `skip-dead` or `requeue-dead` on it): later events
 * of the key wait behind it. Every query about such rows states it this way, because it is the
 * predicate of the partial index `outbox_dead_heads` (migration 0010): written otherwise, a query
 * would not be served by that index. `row` is the alias of the outbox row the query tests.
 */
export function holdsItsKey(row: string): RawBuilder<boolean> {
  const column = (name: string) => sql.ref(`${row}.${name}`);
  return sql<boolean>`${column("dead_at")} IS NOT NULL AND ${column("published_at")} IS NULL AND ${column("skipped_at")} IS NULL`;
}
