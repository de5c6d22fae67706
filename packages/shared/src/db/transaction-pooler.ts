import type { Logger } from "../log/logger.js";
import { createDatabase, type DatabaseHandle, type DatabaseSettings } from "./create-database.js";
import { type DatabaseClientConfig, newDatabaseClient } from "./database-client.js";

/** A backend's pid: the session a statement ran in. */
async function backendPid(client: { query(text: string): Promise<{ rows: Array<{ pid: number }> }> }) {
  const { rows } = await client.query("SELECT pg_backend_pid() AS pid");
  return rows[0]?.pid;
}

/** Tries of the probe before a negative is believed (each four round trips, once at start-up). */
const PROBE_ATTEMPTS = 5;

/**
 * Whether `config` reaches Postgres through a pooler that hands out server connections per
 * transaction (PgBouncer or Supavisor in transaction mode, RDS Proxy multiplexing): a client
 * connection's session is not one Postgres session there, so session state, named prepared
 * statements and session locks land wherever the next transaction does.
 *
 * The probe asks exactly that, with backend pids (the pid is the session): client A reads its pid
 * and goes idle; client B opens a transaction and reads its pid; A, while B's transaction holds
 * whatever server connection it got, reads its pid again. Directly or through a session pooler
 * A's two pids are one and B's differs, always. Through a transaction pooler A's idle server
 * connection is free: B gets it (PgBouncer reuses the last one released) and shares A's pid, or A
 * lands on another and its pid changes. Either is proof; neither is a guess from a version string
 * or a `SHOW` that only some poolers answer. Two connections, four round trips a try, once at start-up;
 * the probe leaves no state behind.
 */
export async function viaTransactionPooler(config: DatabaseClientConfig): Promise<boolean> {
  const a = newDatabaseClient(config, "pooler-probe");
  const b = newDatabaseClient(config, "pooler-probe");
  // A client's error event must not crash the process while the probe runs; the query rejects too.
  a.on("error", () => {});
  b.on("error", () => {});
  try {
    await Promise.all([a.connect(), b.connect()]);
    // A positive is proof; a negative can be another client of the pooler (a second daemon starting
    // beside this one) taking A's server connection and handing it back between A's two reads. So
    // a few tries: directly or through a session pooler every one is negative.
    for (let attempt = 0; attempt < PROBE_ATTEMPTS; attempt += 1) {
      const before = await backendPid(a);
      await b.query("BEGIN");
      const other = await backendPid(b);
      const after = await backendPid(a);
      await b.query("ROLLBACK");
      if (other === before || after !== before) return true;
    }
    return false;
  } finally {
    await Promise.all([a.end().catch(() => {}), b.end().catch(() => {})]);
  }
}

/**
 * The pool to use instead of `direct` (made by {@link createDatabase} from `settings`, no connection
 * opened yet), after asking whether the URL leads through a transaction pooler
 * ({@link viaTransactionPooler}): if so, `direct` is closed and a pool that works through one
 * replaces it (no named prepared statements, no session settings: see
 * `DatabaseSettings.transactionPooler`), said in one info line. A database that does not answer the
 * probe keeps `direct` (a line says so): its statement names still never run another's SQL.
 */
export async function probedDatabase(
  direct: DatabaseHandle,
  settings: DatabaseSettings,
  log: Logger,
): Promise<DatabaseHandle> {
  let pooled: boolean;
  try {
    pooled = await viaTransactionPooler(direct.clientConfig);
  } catch (error) {
    log.info({ err: error }, "transaction pooler not probed: the database did not answer");
    return direct;
  }
  if (!pooled) return direct;
  await direct.close(1_000);
  log.info(
    { transactionPooler: true, preparedStatements: false },
    "database reached through a transaction pooler: statements unprepared, timeouts set per transaction (SET LOCAL), no session state",
  );
  return createDatabase({ ...settings, transactionPooler: true });
}
