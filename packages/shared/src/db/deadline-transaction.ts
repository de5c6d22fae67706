import { type Deadline, DeadlineExceededError } from "@outbox/client";
import { CompiledQuery, type Kysely } from "kysely";

/**
 * `BEGIN` and a `SET LOCAL statement_timeout` of `ms` as one simple-protocol statement list: one round
 * trip, not two. Whole milliseconds, at least 1 (statement_timeout = 0 would mean "no limit at all").
 * The number is ours, an integer, so nothing is spliced into SQL; callers may append statements.
 */
export function beginWithStatementTimeout(ms: number): string {
  return `BEGIN; SET LOCAL statement_timeout = ${Math.max(1, Math.floor(ms))}`;
}

/**
 * A transaction bounded by a request's deadline: `SET LOCAL statement_timeout` to the time left, so
 * the server gives up on a statement when the caller has, not after the pool's fixed timeout. With
 * no time left it throws before opening anything.
 *
 * `work` gets the transaction's connection (a `Kysely` bound to it): everything it runs there is
 * inside the transaction, which commits when `work` resolves and rolls back when it throws.
 */
export async function deadlineTransaction<DB, T>(
  db: Kysely<DB>,
  deadline: Deadline,
  work: (trx: Kysely<DB>) => Promise<T>,
): Promise<T> {
  deadline.throwIfExpired();
  return db.connection().execute(async (connection) => {
    // One round trip, not kysely's two: on a busy request path every round trip costs both
    // processes CPU. A query without parameters goes over the simple protocol, which takes several.
    await connection.executeQuery(CompiledQuery.raw(beginWithStatementTimeout(deadline.remainingMs())));
    let result: T;
    try {
      result = await work(connection);
      if (deadline.expired) throw new DeadlineExceededError("deadline exceeded before the commit");
    } catch (error) {
      // A failed ROLLBACK (the connection died) must not hide why the work failed; the pool drops a
      // dead connection either way.
      await connection.executeQuery(CompiledQuery.raw("ROLLBACK")).catch(() => undefined);
      throw error;
    }
    await connection.executeQuery(CompiledQuery.raw("COMMIT"));
    return result;
  });
}
