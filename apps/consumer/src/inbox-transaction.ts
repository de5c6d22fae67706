import type { ConsumedEvent, Deadline, EventHandler, HandlerContext } from "@outbox/client";
import {
  beginWithStatementTimeout,
  ClientConnection,
  kyselyOn,
  type Logger,
  untilAborted,
} from "@outbox/shared";
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from "kysely";

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

// What kysely sends for trx.transaction() and friends: a COMMIT from a handler would commit the inbox
// row before the handler is done, so the consumer alone ends the transaction.
const transactionControl = /^\s*(begin|commit|rollback|start\s+transaction|end)\b/i;

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
 * ROLLBACK.
 */
class TransactionLane extends ClientConnection {
  #open = true;

  close(): void {
    this.#open = false;
  }

  protected override beforeQuery(sql: string): void {
    // What kysely's driver sends for trx.transaction() and friends comes through here too.
    if (transactionControl.test(sql)) {
      throw new Error("handlers run inside the inbox transaction and must not begin or end one");
    }
    if (!this.#open) throw new TransactionFinishedError("the message's transaction is already over");
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
  let committed = false;
  try {
    // One simple-protocol round trip (no parameters, hence the literals) instead of three:
    //  - BEGIN: the inbox rows and the effect commit together or not at all.
    //  - SET LOCAL statement_timeout: what is left of the deadline bounds every statement on the
    //    server, even if this process stalls; a statement running when the deadline fires is
    //    cancelled, so the ROLLBACK queued behind it runs at once.
    //  - The claim. If another delivery of one of its events is still in flight, the INSERT waits on
    //    its uncommitted key and then sees its outcome, so two consumers never both run the handler.
    const begin = beginWithStatementTimeout(Math.min(options.statementTimeoutMs, deadline.remainingMs()));
    const results: unknown = await client.query(`${begin};\n       ${options.claim}`, []);
    const claimed = options.claimed(claimResult(results));
    if (claimed === undefined) return undefined;

    // The effect, in the same transaction: if the handler throws or the deadline passes, the
    // rollback removes the inbox rows too and a redelivery runs the handler again.
    const trx = kyselyOn<DB>(lane);
    let log: Logger | undefined;
    const context: HandlerContext<DB> = {
      trx,
      deadline,
      get log() {
        log ??= options.log();
        return log;
      },
    };
    // The handler cannot be stopped from outside: past the deadline its transaction is rolled back
    // and its later queries are refused (TransactionLane).
    await untilAborted(options.handle(claimed, context), deadline);
    deadline.throwIfExpired();
    lane.close();
    const commit = await client.query("COMMIT", []);
    // Postgres answers COMMIT with ROLLBACK when a statement failed inside the transaction (a handler
    // that caught its own error): nothing was written, so this is a failure, not a success.
    if (commit.command !== "COMMIT") throw new Error(`transaction ended with ${commit.command}, not COMMIT`);
    committed = true;
    return claimed;
  } finally {
    lane.close();
    // Duplicates, failures and timeouts all end here; a duplicate's rollback undoes nothing.
    const ended = committed || (await rollback(client));
    // A client whose ROLLBACK failed is destroyed: the server ends its transaction on disconnect.
    client.release(!ended);
  }
}

/**
 * The claim's own result: pg answers a statement list with one result per statement, and the claim
 * is the last one we sent, however many statements beginWithStatementTimeout emits before it. Its
 * command says it is the INSERT, not a statement of the prefix.
 */
function claimResult(results: unknown): PostgresQueryResult<unknown> {
  const last: unknown = Array.isArray(results) ? results.at(-1) : undefined;
  if (!isQueryResult(last) || last.command !== "INSERT") {
    throw new Error("the claim's statement list did not end with the result of its INSERT");
  }
  return last;
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
