import { enqueueRows, type NewEvent } from "./enqueue.js";
import type { EnqueueOptions } from "./enqueue-options.js";
import { compiledOutboxInsert, insertRuns } from "./outbox-insert.js";

/**
 * A pg client as `enqueuePg` and the test kit's readers (`enqueuedEvents`, `outboxMark`) use it: one
 * parameterised query that answers rows. node-postgres's `Client` and `PoolClient` are one (so is
 * `Pool`, but each of its queries runs on its own connection, outside any transaction of yours: fine
 * for reading, not for `enqueuePg`).
 */
export interface PgQueryable {
  query(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * `enqueue` for an application on plain `pg` rather than kysely: the same checks, spans and claim
 * check, and the same INSERT (its SQL text and parameters, `$1, $2, …`), sent on `client`. Call it
 * between your own `BEGIN` and `COMMIT` on that client, so the events commit or roll back with the
 * business change. Returns the event ids.
 */
export function enqueuePg(
  client: PgQueryable,
  events: readonly NewEvent[],
  options?: EnqueueOptions,
): Promise<string[]> {
  return enqueueRows(
    events,
    async (rows) => {
      for (const run of insertRuns(rows)) {
        const { sql, parameters } = compiledOutboxInsert(run);
        await client.query(sql, parameters);
      }
    },
    options,
    "runs",
  );
}
