import { type OutboxTables as Database, type Deadline, DeadlineExceededError } from "@outbox/client";
import type {
  CompiledQuery,
  Kysely,
  PostgresPool,
  PostgresPoolClient,
  PostgresQueryResult,
  QueryResult,
  Transaction,
} from "kysely";
import { ClientConnection, kyselyOn, transactionOn } from "./client-kysely.js";
import { isInFailedTransaction } from "./postgres-errors.js";

/**
 * `BEGIN` and a `SET LOCAL statement_timeout` of `ms` as one simple-protocol statement list: one round
 * trip, not two. Whole milliseconds, at least 1 (statement_timeout = 0 would mean "no limit at all").
 * The number is ours, an integer, so nothing is spliced into SQL; callers may append statements.
 */
export function beginWithStatementTimeout(ms: number): string {
  return `BEGIN; SET LOCAL statement_timeout = ${Math.max(1, Math.floor(ms))}`;
}

/** How many results pg answers beginWithStatementTimeout's statements with. */
const BEGIN_RESULTS = 2;

/**
 * The deadline passed while Postgres had not answered: the caller's time ran out (a 504 like any
 * other DeadlineExceededError), and the database may be the reason (a frozen server, a failover, a
 * full pool), which a caller may want to warn about, or probe.
 */
export class PostgresUnansweredError extends DeadlineExceededError {
  constructor(
    readonly waitingFor: "a pooled connection" | "Postgres",
    options: { cause: unknown },
  ) {
    super(`deadline exceeded while waiting for ${waitingFor}`, options);
  }
}

/** A statement sent after the transaction was over (past its deadline, say): refused, never sent. */
export class TransactionFinishedError extends Error {
  override readonly name = "TransactionFinishedError";
}

/**
 * The work ended the transaction it was given (a COMMIT, ROLLBACK or ABORT in its SQL, or another
 * BEGIN behind one): what it wrote before went with that statement, committed or rolled back, and
 * what it wrote after ran outside the transaction. Never committed by us, never reported as done.
 */
export class TransactionEscapedError extends Error {
  override readonly name = "TransactionEscapedError";

  constructor(
    how: string,
    /**
     * The id (xid8, as text) of the transaction that was opened, once it wrote: rows it wrote that
     * the work's COMMIT kept carry it as their `xmin`, so a caller can find and undo exactly those.
     */
    readonly xid?: string,
  ) {
    super(
      `the transaction was ended from inside (${how}): what it held went with that statement, committed or rolled back (an inbox row too), and later writes ran outside it; a handler must not end the transaction it is given`,
    );
  }
}

/** Rejects with `reason()` the moment `deadline` aborts, else settles with `work`. */
function beforeDeadline<T>(
  work: Promise<T>,
  deadline: Deadline,
  reason: (abort: unknown) => unknown,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const unlink = deadline.onAbort((abort) => reject(reason(abort)));
    work.then(resolve, reject).finally(unlink);
  });
}

/**
 * A pool client, waited for no longer than `deadline`: the pool's own wait for a client does not know
 * it. A client that arrives after the deadline goes back to the pool.
 */
async function connectBefore(pool: PostgresPool, deadline: Deadline): Promise<PostgresPoolClient> {
  deadline.throwIfExpired();
  const connecting = pool.connect();
  return beforeDeadline(
    connecting,
    deadline,
    (cause) => new PostgresUnansweredError("a pooled connection", { cause }),
  ).catch((error: unknown) => {
    connecting.then(
      (late) => late.release(),
      () => undefined,
    );
    throw error;
  });
}

/**
 * Runs `work` on a pool client of its own, bounded by `deadline` on this side of the wire. The
 * server-side statement timeout cannot help when the server or the network stops answering (a frozen
 * backend, a failover, a NAT that dropped the flow): its cancel never arrives, and the pool's own
 * wait for a client does not know the request's deadline. So when the deadline aborts first, this
 * rejects at once with a PostgresUnansweredError, and the client, if one was checked out, is destroyed
 * rather than returned (its socket closed: the statement in flight is abandoned, an open transaction
 * rolls back on the server): the pool opens a fresh connection for the next caller instead of handing
 * out one that may never answer.
 */
export async function deadlineConnection<T, DB = Database>(
  pool: PostgresPool,
  deadline: Deadline,
  work: (db: Kysely<DB>) => Promise<T>,
): Promise<T> {
  const client = await connectBefore(pool, deadline);
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
    return await beforeDeadline(
      running,
      deadline,
      (cause) => new PostgresUnansweredError("Postgres", { cause }),
    );
  } finally {
    unlink();
    release(false);
  }
}

// What kysely sends for trx.startTransaction() and friends (trx.transaction() throws in kysely
// itself: the work's trx is a Transaction), refused before it reaches Postgres: a COMMIT from the
// work would commit before the work is done, so deadlineTransaction alone ends the transaction. Only
// a statement's start can be read this way; what gets past it (a statement list, which pg sends as
// plain text) is caught by the transaction's identity (endTransaction).
const transactionControl = /^\s*(begin|commit|rollback|abort|start\s+transaction|end)\b/i;

/**
 * What pg last heard from the server in ReadyForQuery: "I" outside any transaction, "T" inside one,
 * "E" inside a failed one. Undefined from a pg too old to tell (before 8.16's getTransactionStatus):
 * the identity check at the end still holds then.
 */
function transactionStatus(client: PostgresPoolClient): string | undefined {
  const status = (client as { getTransactionStatus?: () => string | null }).getTransactionStatus?.();
  return status ?? undefined;
}

/**
 * The work's view of the transaction's connection: the one connection of a Kysely over this one
 * client, refusing every statement once the transaction is over. Work still running after its
 * deadline cannot write outside the (rolled back) transaction, nor on a connection already gone. The
 * check and pg's enqueue happen in one synchronous step, so nothing slips in behind the end. Once a
 * statement of the work has left the connection outside any transaction, every later one is refused
 * too: it would commit on its own.
 */
class TransactionConnection extends ClientConnection {
  #open = true;
  #left = false;
  #running = 0;

  close(): void {
    this.#open = false;
  }

  /** A statement of the work ended the transaction (pg saw the connection idle after it). */
  get left(): boolean {
    return this.#left;
  }

  /** A statement, the work's or ours, is waiting for Postgres's answer. */
  get waiting(): boolean {
    return this.#running > 0;
  }

  /** One of our own statements (BEGIN, COMMIT, ROLLBACK): never refused, counted while it waits. */
  async send(sql: string): Promise<unknown> {
    this.#running += 1;
    try {
      return await this.client.query(sql, []);
    } finally {
      this.#running -= 1;
    }
  }

  protected override beforeQuery(sql: string): void {
    if (transactionControl.test(sql)) {
      throw new Error("statements run inside the transaction they are given and must not begin or end one");
    }
    if (this.#left) throw new TransactionEscapedError("a statement it sent before this one ended it");
    if (!this.#open) throw new TransactionFinishedError("the transaction is already over");
  }

  override async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    this.#running += 1;
    try {
      return await super.executeQuery<R>(compiledQuery);
    } finally {
      this.#running -= 1;
      if (this.#open && transactionStatus(this.client) === "I") this.#left = true;
    }
  }
}

export interface DeadlineTransactionOptions {
  /** The most any statement may take, however much time the deadline leaves (DB_STATEMENT_TIMEOUT_MS). */
  readonly statementTimeoutMs?: number;
  /**
   * Statements sent behind BEGIN in the same round trip (no parameters: the simple protocol), e.g. an
   * INSERT that claims the transaction's key; `work` gets their results.
   */
  readonly opening?: string;
}

/**
 * A transaction bounded by a deadline, on both sides of the wire: `SET LOCAL statement_timeout` to
 * the time left (at most `statementTimeoutMs`), so the server gives up on a statement when the caller
 * has (it holds even if this process stalls), and {@link deadlineConnection}'s client-side bound,
 * which holds when the server does not answer at all: past the deadline this rejects at once (with a
 * PostgresUnansweredError if a statement was waiting for Postgres, else with the deadline's reason),
 * and the client is destroyed, which rolls the transaction back on the server. With no time left it
 * throws before opening anything.
 *
 * `work` gets the transaction (a kysely `Transaction` on its one connection) and the `opening`
 * statements' results: everything it runs there is inside the transaction, which commits when `work`
 * resolves and rolls back when it throws. Its statements may not begin or end a transaction, and are
 * refused once the transaction is over. If they ended it anyway (a statement list), the end says so
 * with a TransactionEscapedError instead of committing whatever transaction is open then. A deadline
 * that fires while COMMIT is in flight leaves the outcome unknown to the caller (the server may have
 * committed): callers that retry need an idempotency key (the inbox row, the idempotency key).
 */
export async function deadlineTransaction<T, DB = Database>(
  pool: PostgresPool,
  deadline: Deadline,
  work: (trx: Transaction<DB>, opened: readonly PostgresQueryResult<unknown>[]) => Promise<T>,
  options: DeadlineTransactionOptions = {},
): Promise<T> {
  const client = await connectBefore(pool, deadline);
  const connection = new TransactionConnection(client);
  let ended = false;
  let destroyed = false;
  const unlink = deadline.onAbort(() => {
    connection.close();
    destroyed = true;
    client.release(true);
  });
  const running = (async (): Promise<T> => {
    // One simple-protocol round trip (no parameters) instead of kysely's several:
    //  - BEGIN and SET LOCAL statement_timeout (beginWithStatementTimeout);
    //  - the caller's opening statements;
    //  - the transaction's id: what endTransaction compares with, whatever the work sends in
    //    between. Assigned here when there is no opening statement; after one, only if it wrote
    //    (NULL otherwise: an opening that claimed nothing leaves nothing to check, nor to commit).
    const timeoutMs = Math.min(
      options.statementTimeoutMs ?? Number.POSITIVE_INFINITY,
      deadline.remainingMs(),
    );
    const opening = options.opening === undefined ? "" : `;\n       ${options.opening}`;
    const id = options.opening === undefined ? "pg_current_xact_id()" : "pg_current_xact_id_if_assigned()";
    const results = await connection.send(
      `${beginWithStatementTimeout(timeoutMs)}${opening};\n       SELECT ${id}::text AS xid`,
    );
    const { opened, xid } = openingResults(results);
    let result: T;
    try {
      result = await work(transactionOn<DB>(connection), opened);
      if (deadline.expired) throw new DeadlineExceededError("deadline exceeded before the commit");
    } catch (error) {
      // Work that threw may have left the transaction first (its failure then often the refusal of a
      // later statement): that is what it is reported as. Past the deadline, the destroyed client
      // rolls back.
      if (!deadline.aborted) {
        connection.close();
        try {
          ended = await endTransaction(connection, xid, "ROLLBACK");
        } catch (ending) {
          if (ending instanceof TransactionEscapedError) throw ending;
          // Any other failure of the rollback: the work's error is the caller's; the end retries it.
        }
      }
      throw error;
    }
    connection.close();
    ended = await endTransaction(connection, xid, "COMMIT");
    return result;
  })();
  // Rejected once the socket is gone, after the deadline has already answered the caller.
  running.catch(() => undefined);
  try {
    return await beforeDeadline(running, deadline, (cause) =>
      connection.waiting ? new PostgresUnansweredError("Postgres", { cause }) : cause,
    );
  } finally {
    unlink();
    connection.close();
    if (!destroyed) {
      // Failures end here; a rollback after nothing was written undoes nothing. After work that
      // left the transaction it ends one the work may have begun itself. A client whose ROLLBACK
      // failed is destroyed: the server ends its transaction on disconnect.
      ended ||= await rollback(connection);
      client.release(!ended);
    }
  }
}

/** A COMMIT asked of a transaction in which a statement failed (its error caught by the work). */
class FailedTransactionError extends Error {
  constructor() {
    super("a statement failed inside the transaction (its error was caught): nothing was written");
  }
}

/** The SQLSTATE our own check raises (an implementation-defined class: no Postgres error has it). */
const NOT_THE_TRANSACTION = "OUTBX";

/**
 * Ends the transaction with COMMIT or ROLLBACK, only if it is still the one that was opened, whatever
 * the work sent: throws TransactionEscapedError if it is not. Resolves true once ended.
 *
 * Postgres says which transaction is open: its id, once assigned (by the opening statements' INSERT,
 * say), is compared with the one read then, in the same round trip as the COMMIT. A DO block, because
 * only a raised error stops the COMMIT behind it in the statement list: a COMMIT outside any
 * transaction answers `COMMIT` too, and one inside a transaction the work began would commit that one.
 */
async function endTransaction(
  connection: TransactionConnection,
  xid: string | undefined,
  end: "COMMIT" | "ROLLBACK",
): Promise<true> {
  const status = transactionStatus(connection.client);
  if (connection.left || status === "I")
    throw new TransactionEscapedError("the connection was left outside it", xid);
  if (status === "E") {
    // A statement failed in the transaction, and Postgres answers only ROLLBACK now. The work caught
    // its error if it returned: a COMMIT would have written nothing.
    if (end === "COMMIT") throw new FailedTransactionError();
    await connection.send("ROLLBACK");
    return true;
  }
  if (xid === undefined) {
    // Postgres answers a COMMIT of a failed transaction with the tag ROLLBACK, not an error.
    const answer = (await connection.send(end)) as { command?: unknown };
    if (end === "COMMIT" && answer.command === "ROLLBACK") throw new FailedTransactionError();
    return true;
  }
  try {
    await connection.send(
      `DO $check$ BEGIN
         IF pg_current_xact_id_if_assigned() IS DISTINCT FROM '${xid}'::xid8 THEN
           RAISE EXCEPTION 'not the transaction that was opened' USING ERRCODE = '${NOT_THE_TRANSACTION}';
         END IF;
       END $check$;
       ${end}`,
    );
  } catch (error) {
    if ((error as { code?: unknown }).code === NOT_THE_TRANSACTION) {
      throw new TransactionEscapedError("another transaction was open in its place", xid);
    }
    // pg rejects a failed statement at its error, before the "ready" message that says the
    // transaction has failed; a loaded machine can run the work's catch and its return in between,
    // so the status read above still said "in a transaction". Postgres refused the check: the same case.
    if (end === "COMMIT" && isInFailedTransaction(error)) throw new FailedTransactionError();
    throw error;
  }
  return true;
}

/**
 * The opening statements' own results and the transaction's id: pg answers a statement list with one
 * result per statement: BEGIN's, the opening statements', then the id's SELECT.
 */
function openingResults(results: unknown): {
  opened: readonly PostgresQueryResult<unknown>[];
  xid: string | undefined;
} {
  const all: unknown[] = Array.isArray(results) ? results : [results];
  const id = all.at(-1);
  const opened = all.slice(BEGIN_RESULTS, -1);
  if (!isQueryResult(id) || id.command !== "SELECT" || !opened.every(isQueryResult)) {
    throw new Error("the transaction's opening statement list did not end with the SELECT of its id");
  }
  const xid: unknown = (id.rows[0] as { xid?: unknown } | undefined)?.xid;
  if (xid !== null && (typeof xid !== "string" || !/^\d+$/.test(xid))) {
    throw new Error("the transaction's id is not a number");
  }
  return { opened, xid: xid ?? undefined };
}

function isQueryResult(value: unknown): value is PostgresQueryResult<unknown> {
  return typeof value === "object" && value !== null && "command" in value && "rowCount" in value;
}

/** Ends the transaction, behind whatever the work still has queued on the client. */
async function rollback(connection: TransactionConnection): Promise<boolean> {
  try {
    await connection.send("ROLLBACK");
    return true;
  } catch {
    return false;
  }
}
