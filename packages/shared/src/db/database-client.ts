import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { inQuerySpan } from "../telemetry/query-span.js";
import { type ConnectionBounds, PG_QUERY_READ_TIMEOUT } from "./connection-bounds.js";
import type { TlsTarget } from "./database-tls.js";
import type { ConnectionHealth } from "./pool-health.js";
import { isPasswordRefused, isPreparedStatementClash, isStalePreparedStatement } from "./postgres-errors.js";
import type { RotatingPassword } from "./rotating-password.js";

export interface DatabaseClientConfig extends ConnectionBounds, TlsTarget {
  /** When set, what a connection authenticates with instead of the URL's password; see {@link newDatabaseClient}. */
  readonly rotatingPassword?: RotatingPassword;
}

type ConnectCallback = (error: Error | null, client?: pg.Client) => void;

/** What a connection does when connecting fails; see {@link ConnectingClient}. */
interface ConnectFailure {
  readonly rotatingPassword: RotatingPassword | undefined;
  /** Puts the setting to change in front of a connection error's message (resolveSsl's `explain`). */
  readonly explain: (error: Error) => Error;
  /** Statements a new connection runs before it is used (the pool's session settings), if any. */
  readonly onConnect?: string;
}

/**
 * pg's client, authenticating with the rotating password when there is one, and on a failed
 * connect telling that password it was refused (the next connection reads the secret first) and
 * naming the TLS setting to change. Every connection of a daemon is one: the pool's, and one of
 * its own (the relay's LISTEN).
 */
class ConnectingClient extends pg.Client {
  readonly #failure: ConnectFailure;

  constructor(config: pg.ClientConfig, failure: ConnectFailure) {
    super(config);
    this.#failure = failure;
    const password = failure.rotatingPassword;
    // pg asks a function for the password when the server wants one, once per connection; it has to
    // be set on the client, not passed in its config, because pg lets a `connectionString`'s (empty)
    // password win over the config's.
    if (password !== undefined)
      (this as unknown as { password: () => Promise<string> }).password = () => password.current();
  }

  override connect(): Promise<pg.Client>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.Client> | undefined {
    const { onConnect } = this.#failure;
    const connecting = super
      .connect()
      .catch((error: unknown) => {
        if (!(error instanceof Error)) throw error;
        if (isPasswordRefused(error)) this.#failure.rotatingPassword?.refused();
        throw this.#failure.explain(error);
      })
      .then(async () => {
        if (onConnect === undefined) return this;
        // Until the pool has it, nobody listens for its errors: a socket lost meanwhile (a pooler
        // still queueing the connection when the pool's connect timeout ends it) rejects the query.
        const unheard = () => {};
        this.on("error", unheard);
        try {
          await this.query(onConnect);
        } catch (error) {
          // A connection without its settings is not handed out.
          this.end().catch(() => {});
          throw error;
        } finally {
          this.off("error", unheard);
        }
        return this;
      });
    if (callback === undefined) return connecting;
    // pg-pool connects this way.
    connecting.then(
      (connected) => callback(null, connected),
      (error: Error) => callback(error),
    );
    return undefined;
  }
}

/**
 * A connection of its own outside the pool (the relay's LISTEN), reaching the server as the pool's
 * do: TLS, bounds and the rotating password included.
 */
export function newDatabaseClient(
  config: Omit<DatabaseClientConfig, "ssl"> & Partial<Pick<DatabaseClientConfig, "ssl">>,
  applicationName: string,
): pg.Client {
  const { rotatingPassword, ...pgConfig } = config;
  return new ConnectingClient(
    { ...pgConfig, application_name: applicationName },
    { rotatingPassword, explain: (error) => error },
  );
}

/**
 * Statements a connection keeps parsed. Kysely builds one text per query shape, so a daemon uses a few
 * dozen; the cap only matters for shapes that vary with their input (a multi-row INSERT per row count),
 * which past it run unnamed as before.
 */
const PREPARED_PER_CONNECTION = 100;

/**
 * A prepared statement's name: its text's hash (and, after a migration changed its result, the
 * how-many-th replacement it is). Derived from the text, a name never stands for two statements, on
 * any connection of any process: whatever a pooler, a failover or a reconnect hands a connection,
 * a name it finds prepared there runs the SQL the name was made from, never another statement
 * with our parameters.
 */
export function statementName(text: string, replaced = 0): string {
  const hash = createHash("sha256").update(text).digest("hex").slice(0, 32);
  return replaced === 0 ? `outbox_${hash}` : `outbox_${hash}_${replaced}`;
}

/** What the pool's connections share: see {@link poolClient}. */
export interface PoolClientOptions extends ConnectFailure {
  readonly prepare: boolean;
  /** The `query_timeout` its bounds give a query, for the message of one left unanswered. */
  readonly queryTimeoutMs: number;
  readonly health: ConnectionHealth;
  /**
   * Behind a transaction pooler, the server-side timeouts a session would have had at connect: each
   * transaction the pool's user begins (Kysely's single-statement `begin`) sets them with SET LOCAL,
   * in the same round trip. A transaction that sets its own (deadlineTransaction's) keeps its own.
   */
  readonly perTransaction?: {
    readonly statement_timeout: number;
    readonly idle_in_transaction_session_timeout: number;
  };
}

/** A transaction's own BEGIN, one statement: Kysely's `begin` or `start transaction …`. */
const PLAIN_BEGIN = /^\s*(begin|start\s+transaction)\b[^;]*$/i;

/**
 * The pool's client (pg-pool makes each with `new Client(config)`): a {@link ConnectingClient} that
 * also prepares every parameterised statement once per connection (Postgres then skips parsing and
 * analysing it again, which for a statement writing three tables costs as much as running it), runs
 * each query in a span, and closes a connection that left a query unanswered past `query_timeout`
 * (telling the pool's {@link ConnectionHealth}, which reads every answer).
 */
export function poolClient(options: PoolClientOptions): typeof pg.Client {
  const { prepare, queryTimeoutMs, health, perTransaction } = options;
  const setLocal =
    perTransaction === undefined
      ? ""
      : `; SET LOCAL statement_timeout = ${perTransaction.statement_timeout}; SET LOCAL idle_in_transaction_session_timeout = ${perTransaction.idle_in_transaction_session_timeout}`;
  return class PoolClient extends ConnectingClient {
    readonly #prepared = new Map<string, string>();
    /** How often each text's statement was replaced after a migration changed its result. */
    readonly #replaced = new Map<string, number>();
    /** A prepared statement clashed with what the server holds: this connection prepares no more. */
    #unprepared = false;

    constructor(config: pg.ClientConfig) {
      super(config, options);
      health.answered(this);
    }

    // biome-ignore lint/suspicious/noExplicitAny: pg's own overloads, passed through unchanged.
    override query(config: any, values?: any, callback?: any): any {
      // Callbacks are pg-pool's `pool.query`, which hands an error back with the client and so
      // closes it; submittables (cursors) return no promise.
      if (callback !== undefined || typeof values === "function" || typeof config?.submit === "function")
        return super.query(config, values, callback);
      const text: string = typeof config === "string" ? config : String(config?.text ?? "");
      const sentAt = performance.now();
      return inQuerySpan(text, this.database, () =>
        this.#send(config, values).then(
          (result) => {
            health.answered(this);
            return result;
          },
          (error: unknown) => {
            if (error instanceof pg.DatabaseError) health.answered(this);
            if (error instanceof Error && error.message === PG_QUERY_READ_TIMEOUT) {
              health.unanswered(sentAt);
              this.#abandon(error);
            }
            throw error;
          },
        ),
      );
    }

    /**
     * pg rejects the caller at `query_timeout` but keeps the query on the wire and the connection in
     * the pool, where every later query would queue behind the one that never ends. Closing it fails
     * what is queued at once and makes the pool open a new one.
     */
    #abandon(error: Error) {
      error.message = `${PG_QUERY_READ_TIMEOUT}: Postgres left a query unanswered for ${queryTimeoutMs} ms (its statement timeout + DB_CONNECT_TIMEOUT_MS): its connection is closed`;
      // With a query in flight, pg's end() destroys the socket rather than waiting for a goodbye.
      this.end().catch(() => {});
    }

    // biome-ignore lint/suspicious/noExplicitAny: pg's own overloads, passed through unchanged.
    async #send(config: any, values: any): Promise<pg.QueryResult> {
      if (setLocal !== "" && typeof config === "string" && PLAIN_BEGIN.test(config)) {
        // Simple protocol (no values): the three statements in one round trip; BEGIN's result is the one.
        const results = (await super.query(`${config}${setLocal}`)) as unknown as pg.QueryResult[];
        return results[0] as pg.QueryResult;
      }
      if (
        !prepare ||
        this.#unprepared ||
        typeof config !== "string" ||
        !Array.isArray(values) ||
        values.length === 0
      )
        return super.query(config, values);
      let name = this.#prepared.get(config);
      if (name === undefined && this.#prepared.size < PREPARED_PER_CONNECTION) {
        name = statementName(config, this.#replaced.get(config) ?? 0);
        this.#prepared.set(config, name);
      }
      if (name === undefined) return super.query(config, values);
      try {
        return await (super.query({ name, text: config, values }) as Promise<pg.QueryResult>);
      } catch (error) {
        if (isStalePreparedStatement(error)) {
          // After an ALTER that changed what it returns, the statement fails once; its next run is
          // prepared again, under the next name of its text (the server still holds the old one).
          this.#prepared.delete(config);
          this.#replaced.set(config, (this.#replaced.get(config) ?? 0) + 1);
        }
        if (!isPreparedStatementClash(error)) throw error;
        // The server does not hold what this connection prepared (a pooler handing the connection's
        // statements to other server connections, a server swapped beneath it): nothing prepared
        // here can be trusted, so it prepares no more. Outside a transaction the statement is run
        // again unprepared; inside one the transaction has failed, which is the connection's fault,
        // not the work's (connectionFailureIn says so).
        this.#unprepared = true;
        if ((this as unknown as { getTransactionStatus(): string | null }).getTransactionStatus() !== "I")
          throw error;
        return super.query(config, values);
      }
    }
  };
}
