import type { ConsumedEvent, Deadline, EventHandler, HandlerContext } from "@outbox/client";
import {
  beginWithStatementTimeout,
  ClientConnection,
  type Logger,
  transactionOn,
  untilAborted,
} from "@outbox/shared";
import type {
  CompiledQuery,
  PostgresPool,
  PostgresPoolClient,
  PostgresQueryResult,
  QueryResult,
} from "kysely";

export type TransactionOutcome = "processed" | "duplicate";

export interface InboxTransaction<DB> {
  /** The pg pool (DatabaseHandle.pool); one client is held for the whole transaction. */
  readonly pool: PostgresPool;
  /** The inbox key's first half: which consumer processed the event. */
  readonly consumer: string;
  readonly event: ConsumedEvent;
  readonly handle: EventHandler<string, unknown, DB>;
  readonly deadline: Deadline;
  /** DB_STATEMENT_TIMEOUT_MS: the per-message limit only ever tightens it. */
  readonly statementTimeoutMs: number;
  /** Made on first use: most handlers never log, and a pino child per message is not free. */
  readonly log: () => Logger;
}

export class TransactionFinishedError extends Error {
  override readonly name = "TransactionFinishedError";
}

/**
 * The handler ended the transaction the consumer opened (a COMMIT, ROLLBACK or ABORT in its SQL, or
 * another BEGIN behind one): its inbox rows went with that statement, committed or rolled back, and
 * what it wrote after ran outside them. Never committed, never deleted as processed: the message's
 * fate is the handler's bug's (process-message.ts).
 */
export class TransactionEscapedError extends Error {
  override readonly name = "TransactionEscapedError";

  constructor(how: string) {
    super(
      `the handler ended the inbox transaction itself (${how}): the inbox row went with it, committed or rolled back, and later writes ran outside it; handlers must not end the transaction they are given`,
    );
  }
}

// What kysely sends for trx.startTransaction() and friends (trx.transaction() throws in kysely
// itself: the handler's trx is a Transaction), refused before it reaches Postgres: a COMMIT
// from a handler would commit the inbox row before the handler is done, so the consumer alone ends
// the transaction. Only a statement's start can be read this way; what gets past it (a statement
// list, which pg sends as plain text) is caught by the transaction's identity (endTransaction).
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
 * A SQL string literal (what pg's escapeLiteral does). Only for the claim statements, whose values
 * are our consumer name, UUIDs we validated and SQS message ids.
 */
export function literal(value: string): string {
  const quoted = `'${value.replaceAll("'", "''").replaceAll("\\", "\\\\")}'`;
  return value.includes("\\") ? `E${quoted}` : quoted;
}

/**
 * The handler's view of the transaction's connection: the one connection of a Kysely over this one
 * client, refusing every query once the transaction is over. A handler still running after its
 * deadline cannot write outside the (rolled back) transaction, nor on a connection already back in
 * the pool. The check and pg's enqueue happen in one synchronous step, so nothing slips in behind
 * ROLLBACK. Once a statement of the handler has left the connection outside any transaction, every
 * later one is refused too: it would commit on its own.
 */
class TransactionLane extends ClientConnection {
  #open = true;
  #left = false;

  close(): void {
    this.#open = false;
  }

  /** A statement of the handler ended the transaction (pg saw the connection idle after it). */
  get left(): boolean {
    return this.#left;
  }

  protected override beforeQuery(sql: string): void {
    if (transactionControl.test(sql)) {
      throw new Error("handlers run inside the inbox transaction and must not begin or end one");
    }
    if (this.#left) throw new TransactionEscapedError("a statement it sent before this one ended it");
    if (!this.#open) throw new TransactionFinishedError("the message's transaction is already over");
  }

  override async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await super.executeQuery<R>(compiledQuery);
    } finally {
      if (this.#open && transactionStatus(this.client) === "I") this.#left = true;
    }
  }
}

/**
 * The exactly-once step: the inbox row and the handler's writes commit in one transaction, or
 * neither does. The caller deletes the message only after this resolves. Three round trips in all:
 * claim, the handler's own statements, COMMIT.
 */
export async function runInboxTransaction<DB>(options: InboxTransaction<DB>): Promise<TransactionOutcome> {
  const { consumer, event } = options;
  // ON CONFLICT DO NOTHING inserts no row (a count of 0, no RETURNING row for pg to parse) when
  // another delivery of the same event already committed: a duplicate, and the handler must not run
  // again. The key is our event id, never the SQS MessageId, which changes when the relay re-publishes.
  const claimed = await runClaimedTransaction<DB, true>({
    ...options,
    claim: `INSERT INTO inbox (consumer, event_id, message_id)
       VALUES (${literal(consumer)}, ${literal(event.id)}, ${literal(event.messageId)})
       ON CONFLICT (consumer, event_id) DO NOTHING`,
    claimed: (result) => (result.rowCount === 0 ? undefined : true),
    handle: (_, context) => options.handle(event, context),
  });
  return claimed === undefined ? "duplicate" : "processed";
}

export interface ClaimedTransaction<DB, Claimed> {
  readonly pool: PostgresPool;
  readonly deadline: Deadline;
  readonly statementTimeoutMs: number;
  readonly log: () => Logger;
  /** The INSERT of the inbox rows, ON CONFLICT DO NOTHING; sent behind BEGIN in one round trip. */
  readonly claim: string;
  /** What the claim's result leaves to handle; undefined when nothing (all duplicates): rolled back. */
  readonly claimed: (result: PostgresQueryResult<unknown>) => Claimed | undefined;
  readonly handle: (claimed: Claimed, context: HandlerContext<DB>) => Promise<void>;
}

/**
 * One inbox transaction, for one message or a batch: claim the inbox rows, run the handler on what
 * was claimed, COMMIT. Resolves what was claimed once committed, undefined when nothing was.
 */
export async function runClaimedTransaction<DB, Claimed>(
  options: ClaimedTransaction<DB, Claimed>,
): Promise<Claimed | undefined> {
  const { deadline } = options;
  deadline.throwIfExpired();
  const client = await options.pool.connect();
  const lane = new TransactionLane(client);
  let ended = false;
  try {
    // One simple-protocol round trip (no parameters, hence the literals) instead of four:
    //  - BEGIN: the inbox rows and the effect commit together or not at all.
    //  - SET LOCAL statement_timeout: what is left of the deadline bounds every statement on the
    //    server, even if this process stalls; a statement running when the deadline fires is
    //    cancelled, so the ROLLBACK queued behind it runs at once.
    //  - The claim. If another delivery of one of its events is still in flight, the INSERT waits on
    //    its uncommitted key and then sees its outcome, so two consumers never both run the handler.
    //  - The transaction's id, which the inserted rows have just assigned: what endTransaction
    //    compares with, whatever the handler sends in between. NULL when nothing was inserted.
    const begin = beginWithStatementTimeout(Math.min(options.statementTimeoutMs, deadline.remainingMs()));
    const results: unknown = await client.query(
      `${begin};\n       ${options.claim};\n       SELECT pg_current_xact_id_if_assigned()::text AS xid`,
      [],
    );
    const { claim, xid } = claimResults(results);
    const claimed = options.claimed(claim);
    if (claimed === undefined) return undefined;
    if (xid === undefined) throw new Error("the claim inserted rows but its transaction has no id");

    // The effect, in the same transaction: if the handler throws or the deadline passes, the
    // rollback removes the inbox rows too and a redelivery runs the handler again.
    const trx = transactionOn<DB>(lane);
    let log: Logger | undefined;
    const context: HandlerContext<DB> = {
      trx,
      deadline,
      get log() {
        log ??= options.log();
        return log;
      },
    };
    try {
      // The handler cannot be stopped from outside: past the deadline its transaction is rolled back
      // and its later queries are refused (TransactionLane).
      await untilAborted(options.handle(claimed, context), deadline);
    } catch (error) {
      // A handler that threw may have left the transaction first (its failure then often the refusal
      // of a later statement): that is what it is reported as. Past the deadline, the rollback alone.
      if (!deadline.aborted) {
        lane.close();
        try {
          ended = await endTransaction(client, lane, xid, "ROLLBACK");
        } catch (ending) {
          if (ending instanceof TransactionEscapedError) throw ending;
          // Any other failure of the rollback: the handler's error is the message's; finally retries it.
        }
      }
      throw error;
    }
    deadline.throwIfExpired();
    lane.close();
    ended = await endTransaction(client, lane, xid, "COMMIT");
    return claimed;
  } finally {
    lane.close();
    // Duplicates, failures and timeouts all end here; a duplicate's rollback undoes nothing. After a
    // handler left the transaction it ends one it may have begun itself.
    ended ||= await rollback(client);
    // A client whose ROLLBACK failed is destroyed: the server ends its transaction on disconnect.
    client.release(!ended);
  }
}

/** The SQLSTATE our own check raises (an implementation-defined class: no Postgres error has it). */
const NOT_THE_INBOX_TRANSACTION = "OUTBX";

/**
 * Ends the inbox transaction with COMMIT or ROLLBACK, only if it is still the one the claim ran in,
 * whatever the handler sent: throws TransactionEscapedError if it is not. Resolves true once ended.
 *
 * Postgres says which transaction is open: its id, assigned by the claim's INSERT, is compared with
 * the one read then, in the same round trip as the COMMIT. A DO block, because only a raised error
 * stops the COMMIT behind it in the statement list: a COMMIT outside any transaction answers
 * `COMMIT` too, and one inside a transaction the handler began would commit that one.
 */
async function endTransaction(
  client: PostgresPoolClient,
  lane: TransactionLane,
  xid: string,
  end: "COMMIT" | "ROLLBACK",
): Promise<true> {
  const status = transactionStatus(client);
  if (lane.left || status === "I") throw new TransactionEscapedError("the connection was left outside it");
  if (status === "E") {
    // A statement failed in the transaction, and Postgres answers only ROLLBACK now. The handler
    // caught its error if it returned: a COMMIT would have written nothing.
    if (end === "COMMIT") {
      throw new Error(
        "a statement failed inside the inbox transaction (the handler caught its error): nothing was written",
      );
    }
    await client.query("ROLLBACK", []);
    return true;
  }
  try {
    await client.query(
      `DO $check$ BEGIN
         IF pg_current_xact_id_if_assigned() IS DISTINCT FROM '${xid}'::xid8 THEN
           RAISE EXCEPTION 'not the inbox transaction' USING ERRCODE = '${NOT_THE_INBOX_TRANSACTION}';
         END IF;
       END $check$;
       ${end}`,
      [],
    );
  } catch (error) {
    if ((error as { code?: unknown }).code === NOT_THE_INBOX_TRANSACTION) {
      throw new TransactionEscapedError("another transaction was open in its place");
    }
    throw error;
  }
  return true;
}

/**
 * The claim's own result and the transaction's id: pg answers a statement list with one result per
 * statement, and the claim and the id are the last two we sent, however many statements
 * beginWithStatementTimeout emits before them. Their commands say they are the INSERT and the SELECT.
 */
function claimResults(results: unknown): { claim: PostgresQueryResult<unknown>; xid: string | undefined } {
  const [claim, id]: unknown[] = Array.isArray(results) ? results.slice(-2) : [];
  if (!isQueryResult(claim) || claim.command !== "INSERT" || !isQueryResult(id) || id.command !== "SELECT") {
    throw new Error("the claim's statement list did not end with the results of its INSERT and its SELECT");
  }
  const xid: unknown = (id.rows[0] as { xid?: unknown } | undefined)?.xid;
  if (xid !== null && (typeof xid !== "string" || !/^\d+$/.test(xid))) {
    throw new Error("the claim's transaction id is not a number");
  }
  return { claim, xid: xid ?? undefined };
}

function isQueryResult(value: unknown): value is PostgresQueryResult<unknown> {
  return typeof value === "object" && value !== null && "command" in value && "rowCount" in value;
}

/** Ends the transaction, behind whatever the handler still has queued on the client. */
async function rollback(client: PostgresPoolClient): Promise<boolean> {
  try {
    await client.query("ROLLBACK", []);
    return true;
  } catch {
    return false;
  }
}
