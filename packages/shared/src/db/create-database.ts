import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import type { Database } from "./schema.js";

export interface DatabaseSettings {
  readonly url: string;
  /** Becomes `application_name`, so `pg_stat_activity` shows which daemon holds a connection. */
  readonly service: string;
  readonly poolMax?: number;
  readonly statementTimeoutMs: number;
  readonly idleInTransactionTimeoutMs: number;
}

export interface DatabaseHandle {
  readonly db: Kysely<Database>;
  readonly pool: pg.Pool;
  /**
   * Ends the pool, waiting at most `timeoutMs`: `pool.end()` waits for every checked-out client, and a
   * stuck one must not eat the platform's grace period. Resolves `true` when the pool ended in time.
   */
  close(timeoutMs: number): Promise<boolean>;
}

// pg returns bigint (int8) as a string by default: keep it, seq values can exceed 2^53.
export function createDatabase(settings: DatabaseSettings): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: settings.url,
    max: settings.poolMax ?? 25,
    // Recycle connections so a failover or a DNS change is picked up without a restart.
    maxLifetimeSeconds: 300,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    application_name: settings.service,
    // Server-side limits: they hold even when this process is frozen or its timers are late.
    statement_timeout: settings.statementTimeoutMs,
    idle_in_transaction_session_timeout: settings.idleInTransactionTimeoutMs,
  });
  // A server restart or failover makes every connection emit 'error'. The pool re-emits it for idle
  // clients, and a checked-out client emits it on itself; unheard, either crashes the process. The
  // query in progress rejects on its own and the broken client is discarded, so the listeners only
  // keep a database blip from becoming a crash.
  pool.on("error", () => {});
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  let closing: Promise<void> | undefined;
  return {
    db,
    pool,
    async close(timeoutMs) {
      closing ??= db.destroy();
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      try {
        return await Promise.race([closing.then(() => true as const), timedOut]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
