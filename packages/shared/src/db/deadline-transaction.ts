import { type Kysely, sql, type Transaction } from "kysely";
import { type Deadline, DeadlineExceededError } from "../deadline/deadline.js";

/**
 * A transaction bounded by a request's deadline: `SET LOCAL statement_timeout` to the time left, so
 * the server gives up on a statement when the caller has, not after the pool's fixed timeout. With
 * no time left it throws before opening anything.
 */
export async function deadlineTransaction<DB, T>(
  db: Kysely<DB>,
  deadline: Deadline,
  work: (trx: Transaction<DB>) => Promise<T>,
): Promise<T> {
  deadline.throwIfExpired();
  return db.transaction().execute(async (trx) => {
    // Whole milliseconds, at least 1: statement_timeout = 0 would mean "no limit at all".
    const remainingMs = Math.max(1, Math.floor(deadline.remainingMs()));
    await sql`SELECT set_config('statement_timeout', ${String(remainingMs)}, true)`.execute(trx);
    const result = await work(trx);
    if (deadline.expired) throw new DeadlineExceededError("deadline exceeded before the commit");
    return result;
  });
}
