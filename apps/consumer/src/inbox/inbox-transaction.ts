import { type ConsumedEvent, Deadline, type EventHandler, type HandlerContext } from "@outbox/client";
import {
  deadlineConnection,
  deadlineTransaction,
  type Logger,
  TransactionEscapedError,
} from "@outbox/shared";
import { type PostgresPool, type PostgresQueryResult, sql } from "kysely";

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

/**
 * A SQL string literal (what pg's escapeLiteral does). Only for the claim statements, whose values
 * are our consumer name, UUIDs we validated and SQS message ids.
 */
export function literal(value: string): string {
  const quoted = `'${value.replaceAll("'", "''").replaceAll("\\", "\\\\")}'`;
  return value.includes("\\") ? `E${quoted}` : quoted;
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
    claimedIds: [event.id],
    handle: (_, context) => options.handle(event, context),
  });
  return claimed === undefined ? "duplicate" : "processed";
}

export interface ClaimedTransaction<DB, Claimed> {
  readonly pool: PostgresPool;
  readonly deadline: Deadline;
  readonly statementTimeoutMs: number;
  readonly log: () => Logger;
  /** The inbox key's first half, as in `claim`. */
  readonly consumer: string;
  /** The INSERT of the inbox rows, ON CONFLICT DO NOTHING; sent behind BEGIN in one round trip. */
  readonly claim: string;
  /** The event ids `claim` inserts (or finds already there). */
  readonly claimedIds: readonly string[];
  /** What the claim's result leaves to handle; undefined when nothing (all duplicates). */
  readonly claimed: (result: PostgresQueryResult<unknown>) => Claimed | undefined;
  readonly handle: (claimed: Claimed, context: HandlerContext<DB>) => Promise<void>;
}

/**
 * One inbox transaction, for one message or a batch, on the one deadline transaction
 * (deadlineTransaction, @outbox/shared): claim the inbox rows, run the handler on what was claimed,
 * COMMIT. Resolves what was claimed once committed, undefined when nothing was.
 *
 * The claim goes behind BEGIN in its round trip. If another delivery of one of its events is still
 * in flight, the INSERT waits on its uncommitted key and then sees its outcome, so two consumers
 * never both run the handler. The handler's writes go in the same transaction: if it throws or the
 * deadline passes, the rollback removes the inbox rows too and a redelivery runs it again. It cannot
 * be stopped from outside: past the deadline its transaction is rolled back (the client destroyed)
 * and its later statements are refused; one that ends the transaction itself is caught
 * (TransactionEscapedError) instead of committed, and the inbox rows its COMMIT kept are deleted
 * (forgetEscapedClaim).
 */
export async function runClaimedTransaction<DB, Claimed>(
  options: ClaimedTransaction<DB, Claimed>,
): Promise<Claimed | undefined> {
  try {
    return await claimAndHandle(options);
  } catch (error) {
    if (error instanceof TransactionEscapedError && error.xid !== undefined) {
      await forgetEscapedClaim(options, error.xid);
    }
    throw error;
  }
}

/**
 * A handler that ended its transaction (a COMMIT in a statement list) may have committed the claim's
 * inbox rows with it: rows vouching for an effect that never ran, which would make the message's
 * redrive a duplicate, silently. The rows that transaction wrote are deleted, and only those: their
 * `xmin` is its id, never that of a row another delivery committed since (after a ROLLBACK in the
 * handler, say). A fresh bound of one statement: the message's own deadline may be spent. Whatever
 * else the handler committed stays; its redrive runs the handler again.
 */
async function forgetEscapedClaim(
  options: Pick<
    ClaimedTransaction<unknown, unknown>,
    "pool" | "consumer" | "claimedIds" | "statementTimeoutMs" | "log"
  >,
  xid: string,
): Promise<void> {
  try {
    const result = await deadlineConnection<{ numAffectedRows?: bigint }, unknown>(
      options.pool,
      Deadline.after(options.statementTimeoutMs),
      (db) =>
        sql`
        DELETE FROM inbox
        WHERE consumer = ${options.consumer} AND event_id = ANY(${[...options.claimedIds]}::uuid[])
          AND xmin = ${xid}::xid8::xid
      `.execute(db),
    );
    options
      .log()
      .warn(
        { forgotten: Number(result.numAffectedRows ?? 0) },
        "a handler ended its transaction: the inbox rows its COMMIT kept are deleted, so a redrive runs it again",
      );
  } catch (error) {
    options
      .log()
      .error(
        { err: error, eventIds: options.claimedIds },
        "a handler ended its transaction, and the inbox rows its COMMIT kept could not be deleted: a redrive of these events counts them duplicates; delete their inbox rows first",
      );
  }
}

function claimAndHandle<DB, Claimed>(options: ClaimedTransaction<DB, Claimed>): Promise<Claimed | undefined> {
  const { deadline } = options;
  return deadlineTransaction<Claimed | undefined, DB>(
    options.pool,
    deadline,
    async (trx, [claim]) => {
      if (claim?.command !== "INSERT") throw new Error("the claim's result is not its INSERT's");
      const claimed = options.claimed(claim);
      // All duplicates: the transaction wrote nothing, and its COMMIT commits nothing.
      if (claimed === undefined) return undefined;
      let log: Logger | undefined;
      await options.handle(claimed, {
        trx,
        deadline,
        get log() {
          log ??= options.log();
          return log;
        },
      });
      return claimed;
    },
    { statementTimeoutMs: options.statementTimeoutMs, opening: options.claim },
  );
}
