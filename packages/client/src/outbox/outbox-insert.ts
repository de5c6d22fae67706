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

/** The most parameters one Postgres statement takes: the bind message counts them in 16 bits. */
export const POSTGRES_MAX_PARAMETERS = 65_535;

/** An upper bound of the parameters a row takes in the INSERT: one per column it sets. */
export function rowParameters(row: NewOutboxRow): number {
  return Object.keys(row).length;
}

/**
 * The rows cut, in their order, into runs whose INSERT stays under POSTGRES_MAX_PARAMETERS: past it
 * the count wraps in pg's bind message (08P01, which reads as a connection failure). In order, so a
 * call's keys are still locked in key-lock order across the statements.
 */
export function insertRuns(rows: readonly NewOutboxRow[]): NewOutboxRow[][] {
  const runs: NewOutboxRow[][] = [];
  let run: NewOutboxRow[] = [];
  let parameters = 0;
  for (const row of rows) {
    const needed = rowParameters(row);
    if (run.length > 0 && parameters + needed > POSTGRES_MAX_PARAMETERS) {
      runs.push(run);
      run = [];
      parameters = 0;
    }
    run.push(row);
    parameters += needed;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/**
 * The outbox INSERT, the one statement every way of enqueueing sends: `enqueue` runs it on the
 * application's kysely transaction, `enqueuePg` sends its compiled text and parameters on a pg
 * client. One multi-row INSERT per run of insertRuns; the rows come from `enqueueWith`, already
 * checked and in key-lock order.
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
