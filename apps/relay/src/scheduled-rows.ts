import type { OutboxTables as Database } from "@outbox/client";
import { type Kysely, type RawBuilder, sql } from "kysely";

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

/**
 * Milliseconds from now until the earliest scheduled row is due, on the database's clock (the one the
 * claim compares `available_at` with); undefined when nothing is scheduled. One probe of
 * `outbox_scheduled`: min() over an index range is its first entry — the plan is
 * `Limit -> Index Only Scan using outbox_scheduled, Index Cond: (deliver_at > now())`
 * (apps/relay/test/delayed-events.test.ts checks it). Rounded up, so a timer set to it does not fire
 * before the row is due.
 */
export async function msUntilNextDue(db: Kysely<Database>): Promise<number | undefined> {
  const { rows } = await sql<{ ms: number | null }>`
    SELECT ceil(extract(epoch FROM min(o.deliver_at) - now()) * 1000)::float8 AS ms
    FROM outbox o
    WHERE ${notDueYet("o")}
  `.execute(db);
  return rows[0]?.ms ?? undefined;
}
