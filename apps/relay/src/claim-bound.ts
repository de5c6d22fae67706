import { connectionBounds } from "@outbox/shared";

export interface ClaimTimeouts {
  /** DB_CONNECT_TIMEOUT_MS: the pool's wait for a connection, and a new connection's. */
  readonly dbConnectTimeoutMs: number;
  readonly dbStatementTimeoutMs: number;
}

/**
 * The longest one claim can take while its timeouts work: the pool's wait for a connection
 * (`connectionTimeoutMillis`), then the statement, which pg gives up on past its client-side bound
 * (`query_timeout`: the statement timeout plus the connect timeout, connection-bounds.ts) even when
 * the server never answers. A claim running longer is one no timeout will end: the claim loop has
 * stopped, and `/livez` says so. With the defaults (5 s, 5 s): 5 + 5 + 5 = 15 s.
 */
export function claimBoundMs(timeouts: ClaimTimeouts): number {
  const pool = connectionBounds({
    connectTimeoutMs: timeouts.dbConnectTimeoutMs,
    statementTimeoutMs: timeouts.dbStatementTimeoutMs,
  });
  return pool.connectionTimeoutMillis + pool.query_timeout;
}
