import { createDatabase } from "@outbox/shared";
import { waitUntil } from "@outbox/test-kit";
import { sql } from "kysely";

/** A Postgres backend the pool served a query with, and when Postgres started it (the server's clock). */
export interface ServingBackend {
  readonly pid: number;
  readonly startedMs: number;
}

export interface PoolReplacement {
  readonly first: ServingBackend;
  /** The first backend that was not `first`. */
  readonly next: ServingBackend;
  /** Queries made until then: every one of them succeeded, or the watch failed. */
  readonly queries: number;
  /** Connections to `first` still open after the replacement. */
  readonly firstStillOpen: number;
}

/**
 * Queries through a one-connection pool every `queryEveryMs` until it serves from a new backend,
 * so every query shows which connection the pool serves with; any query that fails fails the
 * watch. `lifetimeSeconds` undefined leaves DB_POOL_MAX_LIFETIME_SECONDS at its default.
 */
export async function watchPoolReplacement(
  url: string,
  options: { lifetimeSeconds?: number; queryEveryMs: number; timeoutMs: number },
): Promise<PoolReplacement> {
  const single = createDatabase({
    url,
    service: "pool-lifetime",
    poolMax: 1,
    ...(options.lifetimeSeconds === undefined ? {} : { poolMaxLifetimeSeconds: options.lifetimeSeconds }),
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 10_000,
  });
  const servingBackend = async (): Promise<ServingBackend> => {
    const { rows } = await sql<ServingBackend>`
      SELECT pid, (extract(epoch FROM backend_start) * 1000)::float8 AS "startedMs"
      FROM pg_stat_activity WHERE pid = pg_backend_pid()
    `.execute(single.db);
    if (rows[0] === undefined) throw new Error("pg_stat_activity has no row for the serving backend");
    return rows[0];
  };
  try {
    const first = await servingBackend();
    let next = first;
    let queries = 1;
    await waitUntil(
      "the pool to serve from a new connection",
      async () => {
        next = await servingBackend();
        queries += 1;
        return next.pid !== first.pid;
      },
      { timeoutMs: options.timeoutMs, intervalMs: options.queryEveryMs },
    );
    // The old connection is closed by the time the pool uses the new one, not left open beside it.
    const { rows } = await sql<{ open: number }>`
      SELECT count(*)::int AS open FROM pg_stat_activity WHERE pid = ${first.pid}
    `.execute(single.db);
    return { first, next, queries, firstStillOpen: rows[0]?.open ?? 0 };
  } finally {
    await single.close(5_000);
  }
}
