import {
  DummyDriver,
  type InsertQueryBuilder,
  type InsertResult,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from "kysely";
import type { NewOutboxRow, OutboxTables } from "../db/schema.js";

/**
 * The outbox INSERT, the one statement every way of enqueueing sends: `enqueue` runs it on the
 * application's kysely transaction, `enqueuePg` sends its compiled text and parameters on a pg
 * client. One multi-row INSERT whatever the count; the rows come from `enqueueWith`, already checked
 * and in key-lock order.
 */
export function outboxInsert(
  db: Kysely<OutboxTables>,
  rows: readonly NewOutboxRow[],
): InsertQueryBuilder<OutboxTables, "outbox", InsertResult> {
  return db.insertInto("outbox").values([...rows]);
}

// A Kysely that only compiles (kysely's documented "cold" set-up): its driver never connects, so
// compiling needs no pool, and the statement is the one the Postgres dialect sends.
const compiler = new Kysely<OutboxTables>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/** The outbox INSERT as SQL text and its parameters ($1, $2, …), for a client that is not kysely. */
export function compiledOutboxInsert(rows: readonly NewOutboxRow[]): {
  readonly sql: string;
  readonly parameters: unknown[];
} {
  const { sql, parameters } = outboxInsert(compiler, rows).compile();
  return { sql, parameters: [...parameters] };
}
