import { type OutboxTables as Database, type Deadline, DeadlineExceededError } from "@outbox/client";
import { CompiledQuery, type Kysely, type PostgresPool } from "kysely";
import { ClientConnection, kyselyOn } from "./client-kysely.js";

/**
 * `BEGIN` and a `SET LOCAL statement_timeout` of `ms` as one simple-protocol statement list: one round
 * trip, not two. Whole milliseconds, at least 1 (statement_timeout = 0 would mean "no limit at all").
 * The number is ours, an integer, so nothing is spliced into SQL; callers may append statements.
 */
export function beginWithStatementTimeout(ms: number): string {
  return `BEGIN; SET LOCAL statement_timeout = ${Math.max(1, Math.floor(ms))}`;
}

/** Rejects with a DeadlineExceededError the moment `deadline` aborts, else settles with `work`. */
/**
 * The deadline passed while Postgres had not answered: the caller's time ran out (a 504 like any
 * other DeadlineExceededError), and the database may be the reason (a frozen server, a failover, a
 * full pool), which a caller may want to warn about.
 */
export class PostgresUnansweredError extends DeadlineExceededError {
  constructor(
    readonly waitingFor: "a pooled connection" | "Postgres",
    options: { cause: unknown },
  ) {
    super(`deadline exceeded while waiting for ${waitingFor}`, options);
  }
}

function beforeDeadline<T>(
  work: Promise<T>,
  deadline: Deadline,
  waitingFor: PostgresUnansweredError["waitingFor"],
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const unlink = deadline.onAbort((reason) =>
      reject(new PostgresUnansweredError(waitingFor, { cause: reason })),
    );
    work.then(resolve, reject).finally(unlink);
  });
}

/**
 * Runs `work` on a pool client of its own, bounded by `deadline` on this side of the wire. The
 * server-side statement timeout cannot help when the server or the network stops answering (a frozen
 * backend, a failover, a NAT that dropped the flow): its cancel never arrives, and the pool's own
 * wait for a client does not know the request's deadline. So when the deadline aborts first, this
 * rejects at once with a DeadlineExceededError, and the client, if one was checked out, is destroyed
 * rather than returned (its socket closed: the statement in flight is abandoned, an open transaction
 * rolls back on the server): the pool opens a fresh connection for the next caller instead of handing
 * out one that may never answer. A client that arrives after the deadline goes back to the pool.
 */
export async function deadlineConnection<T, DB = Database>(
  pool: PostgresPool,
  deadline: Deadline,
  work: (db: Kysely<DB>) => Promise<T>,
): Promise<T> {
  deadline.throwIfExpired();
  const connecting = pool.connect();
  const client = await beforeDeadline(connecting, deadline, "a pooled connection").catch((error: unknown) => {
    connecting.then(
      (late) => late.release(),
      () => undefined,
    );
    throw error;
  });
  let released = false;
  const release = (destroy: boolean) => {
    if (released) return;
    released = true;
    client.release(destroy);
  };
  // pg ends a client whose statement is still running by destroying its socket: the statement's
  // promise rejects and nothing of it comes back into the pool.
  const unlink = deadline.onAbort(() => release(true));
  const running = work(kyselyOn<DB>(new ClientConnection(client)));
  // Rejected once the socket is gone, after the deadline has already answered the caller.
  running.catch(() => undefined);
  try {
    return await beforeDeadline(running, deadline, "Postgres");
  } finally {
    unlink();
    release(false);
  }
}

/**
 * A transaction bounded by a request's deadline, on both sides of the wire: `SET LOCAL
 * statement_timeout` to the time left, so the server gives up on a statement when the caller has (it
 * holds even if this process stalls), and {@link deadlineConnection}'s client-side bound, which holds
 * when the server does not answer at all. With no time left it throws before opening anything.
 *
 * `work` gets the transaction's connection (a `Kysely` bound to it): everything it runs there is
 * inside the transaction, which commits when `work` resolves and rolls back when it throws. A deadline
 * that fires while COMMIT is in flight leaves the outcome unknown to the caller (the server may have
 * committed): callers that retry need an idempotency key.
 */
export async function deadlineTransaction<T, DB = Database>(
  pool: PostgresPool,
  deadline: Deadline,
  work: (trx: Kysely<DB>) => Promise<T>,
): Promise<T> {
  return deadlineConnection<T, DB>(pool, deadline, async (connection) => {
    // One round trip, not kysely's two: on a busy request path every round trip costs both
    // processes CPU. A query without parameters goes over the simple protocol, which takes several.
    await connection.executeQuery(CompiledQuery.raw(beginWithStatementTimeout(deadline.remainingMs())));
    let result: T;
    try {
      result = await work(connection);
      if (deadline.expired) throw new DeadlineExceededError("deadline exceeded before the commit");
    } catch (error) {
      // A failed ROLLBACK (the connection died, or the deadline destroyed it) must not hide why the
      // work failed; the pool drops a dead connection either way.
      await connection.executeQuery(CompiledQuery.raw("ROLLBACK")).catch(() => undefined);
      throw error;
    }
    await connection.executeQuery(CompiledQuery.raw("COMMIT"));
    return result;
  });
}
