import type { OutboxTables as Database } from "@outbox/client";
import { Kysely, PostgresDialect } from "kysely";
import type pg from "pg";
import { commonSettings, RDS_CA_BUNDLE_PATH } from "../config/common-settings.js";
import { ConfigError } from "../config/config-error.js";
import { numericOption } from "../config/library-options.js";
import { closeWithin } from "./close-database.js";
import { connectionBounds } from "./connection-bounds.js";
import { type DatabaseClientConfig, poolClient } from "./database-client.js";
import { type DatabaseSsl, resolveSsl } from "./database-tls.js";
import { ConnectionHealth, HealthCheckedPool } from "./pool-health.js";
import type { RotatingPassword } from "./rotating-password.js";

export interface DatabaseSettings {
  readonly url: string;
  /** Becomes `application_name`, so `pg_stat_activity` shows which daemon holds a connection. */
  readonly service: string;
  /** DB_POOL_MAX; default that setting's default. */
  readonly poolMax?: number;
  /** DB_POOL_MAX_LIFETIME_SECONDS; default that setting's default. */
  readonly poolMaxLifetimeSeconds?: number;
  readonly statementTimeoutMs: number;
  /** DB_CONNECT_TIMEOUT_MS; default that setting's default. See {@link connectionBounds}. */
  readonly connectTimeoutMs?: number;
  /**
   * The longest `statement_timeout` a transaction on this pool sets for itself with `SET LOCAL` (the
   * photo service raises it to a request's deadline), which the client-side bound of every query must
   * cover. Default `statementTimeoutMs`.
   */
  readonly longestStatementMs?: number;
  readonly idleInTransactionTimeoutMs: number;
  /** DB_PREPARED_STATEMENTS: prepare parameterised statements once per connection. Default true. */
  readonly preparedStatements?: boolean;
  /**
   * Default: `auto` with the RDS bundle: what the URL's `sslmode` says, else verified TLS (plain text
   * only to a loopback host).
   */
  readonly ssl?: DatabaseSsl;
  /** Postgres's `plan_cache_mode` for the pool's sessions; see {@link PlanCacheMode}. */
  readonly planCacheMode?: PlanCacheMode;
  /**
   * DATABASE_SECRET_ARN's: each new connection authenticates with this instead of the URL's password,
   * so a rotated password is picked up without a restart.
   */
  readonly password?: RotatingPassword;
  /**
   * The URL leads through a transaction pooler (see createProbedDatabase, which finds out): no named
   * prepared statements, and no session settings at connect (PgBouncer refuses them as startup
   * parameters, and a session is not ours there): each transaction sets its statement and
   * idle-in-transaction timeouts with SET LOCAL. A statement outside a transaction has only the
   * client-side bound (`query_timeout`).
   */
  readonly transactionPooler?: boolean;
}

/**
 * How a prepared statement is planned on each run.
 * - `force_custom_plan` (the default): for its parameters every time, exactly as if it were not
 *   prepared. The relay needs it: a generic plan could ignore how many rows are pending when the claim
 *   picks its index.
 * - `auto` (Postgres's own default): after five runs a generic plan is kept if it costs no more. For a
 *   daemon whose statements are key lookups and single-row writes, whose plan never depends on the
 *   values, re-planning them is wasted CPU: the photo service's three-table INSERT spent about a
 *   quarter of its Postgres time in the planner (533 → 387 µs per transaction without it).
 */
export type PlanCacheMode = "force_custom_plan" | "auto";

export interface DatabaseHandle {
  readonly db: Kysely<Database>;
  readonly pool: pg.Pool;
  /**
   * How to reach the server, TLS included, for a connection of its own outside the pool (the relay's
   * LISTEN): `newDatabaseClient(clientConfig, applicationName)`.
   */
  readonly clientConfig: DatabaseClientConfig;
  /** Whether the pool was made for a transaction pooler (`DatabaseSettings.transactionPooler`). */
  readonly transactionPooler: boolean;
  /**
   * Ends the pool, waiting at most `timeoutMs`: `pool.end()` waits for every checked-out client, and a
   * stuck one must not eat the platform's grace period. Resolves `true` when the pool ended in time.
   */
  close(timeoutMs: number): Promise<boolean>;
}

/**
 * The pool's size (DB_POOL_MAX) and its connections' lifetime (DB_POOL_MAX_LIFETIME_SECONDS, checked
 * by that setting's rule: a library caller cannot turn the replacement off with 0); omitted, each
 * takes its setting's default. The size is not range-checked here: benches size their own pools.
 */
function poolBounds(
  settings: Pick<DatabaseSettings, "poolMax" | "poolMaxLifetimeSeconds">,
): Pick<pg.PoolConfig, "max" | "maxLifetimeSeconds"> {
  const invalid = (message: string) => new RangeError(message);
  return {
    max: settings.poolMax ?? commonSettings.dbPoolMax.default,
    // Recycle connections so a failover or a DNS change is picked up without a restart.
    maxLifetimeSeconds: numericOption(
      commonSettings.dbPoolMaxLifetimeSeconds,
      settings.poolMaxLifetimeSeconds,
      "poolMaxLifetimeSeconds",
      invalid,
    ),
  };
}

/**
 * A pool and Kysely on it (pg returns bigint, int8, as a string by default: kept, seq values can
 * exceed 2^53). TLS (`settings.ssl`): `verify-full` trusts only the CA bundle and checks
 * the server's name against the URL's host; `require` encrypts without verifying anything; the URL's
 * own `sslmode` counts only under `auto` and is never passed to pg. Throws a ConfigError (before any
 * connection) when the TLS settings cannot work: an unsupported `sslmode`, other TLS parameters in
 * the URL, an unreadable CA bundle.
 */
export function createDatabase(settings: DatabaseSettings): DatabaseHandle {
  const {
    problems,
    config: target,
    explain,
  } = resolveSsl(settings.url, settings.ssl ?? { mode: "auto", caFile: RDS_CA_BUNDLE_PATH });
  if (problems.length > 0) throw new ConfigError(problems);
  // Bound the TCP connect and the TLS handshake too (an unanswered handshake fails, never hangs),
  // and every query: see ConnectionBounds.
  const clientConfig: DatabaseClientConfig = {
    ...target,
    ...connectionBounds(settings),
    ...(settings.password === undefined ? {} : { rotatingPassword: settings.password }),
  };
  const health = new ConnectionHealth();
  const transactionPooler = settings.transactionPooler ?? false;
  // Server-side limits: they hold even when this process is frozen or its timers are late.
  const timeouts = {
    statement_timeout: settings.statementTimeoutMs,
    idle_in_transaction_session_timeout: settings.idleInTransactionTimeoutMs,
  };
  // Set by a statement once a connection is made, not as startup parameters: PgBouncer refuses
  // those (`unsupported startup parameter`) in every pool mode. Behind a transaction pooler a
  // session is not ours, so each transaction sets them instead (perTransaction).
  const sessionSettings = `SET statement_timeout = ${timeouts.statement_timeout}; SET idle_in_transaction_session_timeout = ${timeouts.idle_in_transaction_session_timeout}; SET plan_cache_mode = ${settings.planCacheMode ?? "force_custom_plan"}`;
  const pool = new HealthCheckedPool(health, {
    ...clientConfig,
    Client: poolClient({
      prepare: !transactionPooler && (settings.preparedStatements ?? true),
      queryTimeoutMs: clientConfig.query_timeout,
      health,
      rotatingPassword: settings.password,
      explain,
      ...(transactionPooler ? { perTransaction: timeouts } : { onConnect: sessionSettings }),
    }),
    ...poolBounds(settings),
    idleTimeoutMillis: 30_000,
    application_name: settings.service,
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
  return { db, pool, clientConfig, transactionPooler, close: closeWithin(pool, db) };
}
