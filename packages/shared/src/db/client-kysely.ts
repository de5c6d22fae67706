import {
  type CompiledQuery,
  type ConnectionProvider,
  type DatabaseConnection,
  DefaultQueryExecutor,
  Kysely,
  PostgresDialect,
  type PostgresPoolClient,
  type QueryResult,
  Transaction,
} from "kysely";

/**
 * The one connection of a Kysely over one checked-out pg client: every statement goes to that client.
 * `beforeQuery` may refuse a statement; it runs in the same synchronous step as pg's enqueue, so
 * nothing slips in between the check and the send.
 */
export class ClientConnection implements DatabaseConnection, ConnectionProvider {
  constructor(readonly client: PostgresPoolClient) {}

  provideConnection<T>(consumer: (connection: DatabaseConnection) => Promise<T>): Promise<T> {
    return consumer(this);
  }

  /** Throws to refuse `sql`; accepts everything unless a subclass says otherwise. */
  protected beforeQuery(_sql: string): void {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const { sql } = compiledQuery;
    this.beforeQuery(sql);
    const { command, rowCount, rows } = await this.client.query<R>(sql, compiledQuery.parameters);
    // As kysely's PostgresConnection reports it.
    const changed =
      command === "INSERT" || command === "UPDATE" || command === "DELETE" || command === "MERGE";
    return { numAffectedRows: changed ? BigInt(rowCount) : undefined, rows: rows ?? [] };
  }

  // biome-ignore lint/correctness/useYield: refuses before the first row
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("cursors are not available on a single-client connection");
  }
}

// Shared by every such Kysely: building one from a dialect per transaction (driver, compiler,
// adapter, connection provider) cost more than a short statement. Its pool is never used: the
// statements go to the connection's client, and the driver only turns trx.transaction() and friends
// into BEGIN/COMMIT/SAVEPOINT statements, which go there too.
const dialect = new PostgresDialect({
  pool: async () => {
    throw new Error("this Kysely runs its statements on its one client only");
  },
});
const driver = dialect.createDriver();
const compiler = dialect.createQueryCompiler();
const adapter = dialect.createAdapter();

const propsOn = (connection: ClientConnection) => ({
  config: { dialect },
  dialect,
  driver,
  executor: new DefaultQueryExecutor(compiler, adapter, connection),
});

/** A Kysely whose every statement runs on `connection`'s client. */
export function kyselyOn<DB>(connection: ClientConnection): Kysely<DB> {
  return new Kysely<DB>(propsOn(connection));
}

/**
 * A kysely `Transaction` whose every statement runs on `connection`'s client, for a transaction the
 * caller opened there and will end itself: it is what kysely's own `transaction()` hands its callback
 * (`isTransaction`, and `transaction()` on it throws), so code typed for a `Transaction<DB>` takes it.
 */
export function transactionOn<DB>(connection: ClientConnection): Transaction<DB> {
  return new Transaction<DB>(propsOn(connection));
}
