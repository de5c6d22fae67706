import { commonSettings } from "../config/common-settings.js";
import { numericOption } from "../config/library-options.js";

/**
 * What bounds every wait on a connection on the client side, as pg's own options. The server's
 * `statement_timeout` bounds a statement only while the server runs: a server that is frozen, failed
 * over or cut off by a NAT answers nothing, and a connection without these waits for ever.
 */
export interface ConnectionBounds {
  /** TCP keepalive: a peer that vanished is noticed on an idle connection, which no query would notice. */
  readonly keepAlive: true;
  /** Silence before the first keepalive probe (the kernel's interval and count do the rest). */
  readonly keepAliveInitialDelayMillis: number;
  /** TCP connect, TLS handshake and authentication; for a pool, also the wait for a free connection. */
  readonly connectionTimeoutMillis: number;
  /**
   * How long a query may go unanswered before its caller gets an error: the longest statement the
   * server may run, plus one connect timeout for the server's own timeout error to come back. Only a
   * server that no longer answers gets there; the pool then closes the connection (see
   * {@link poolClient}), and the LISTEN connection is replaced.
   */
  readonly query_timeout: number;
}

/** The timeouts the bounds derive from; see DatabaseSettings. */
export interface BoundedTimeouts {
  readonly statementTimeoutMs?: number;
  readonly connectTimeoutMs?: number;
  readonly longestStatementMs?: number;
}

/**
 * The client-side bounds from the settings' timeout hierarchy (docs/configuration.md): connect and
 * first keepalive probe DB_CONNECT_TIMEOUT_MS, a query DB_STATEMENT_TIMEOUT_MS (or the longest
 * statement a transaction may set) + DB_CONNECT_TIMEOUT_MS. Omitted timeouts take their settings'
 * defaults, for a library user who gives only a URL.
 */
export function connectionBounds(timeouts: BoundedTimeouts): ConnectionBounds {
  const invalid = (message: string) => new RangeError(message);
  const connectMs = numericOption(
    commonSettings.dbConnectTimeoutMs,
    timeouts.connectTimeoutMs,
    "connectTimeoutMs",
    invalid,
  );
  const statementMs = Math.max(
    timeouts.longestStatementMs ?? 0,
    numericOption(
      commonSettings.dbStatementTimeoutMs,
      timeouts.statementTimeoutMs,
      "statementTimeoutMs",
      invalid,
    ),
  );
  return {
    keepAlive: true,
    keepAliveInitialDelayMillis: connectMs,
    connectionTimeoutMillis: connectMs,
    query_timeout: statementMs + connectMs,
  };
}

/** The message of pg's error when a query outlives `query_timeout`. */
export const PG_QUERY_READ_TIMEOUT = "Query read timeout";

/** Whether pg gave up on a query that the server left unanswered past `query_timeout`. */
export function isQueryReadTimeout(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith(PG_QUERY_READ_TIMEOUT);
}
