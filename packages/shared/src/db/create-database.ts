import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { performance } from "node:perf_hooks";
import type { ConnectionOptions } from "node:tls";
import type { OutboxTables as Database } from "@outbox/client";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { commonSettings, RDS_CA_BUNDLE_PATH } from "../config/common-settings.js";
import { ConfigError, type ConfigProblem } from "../config/config-error.js";
import { numericOption } from "../config/library-options.js";
import { settlesWithin } from "../lifecycle/bounded-waits.js";
import { inQuerySpan } from "../telemetry/query-span.js";
import { isPasswordRefused, isStalePreparedStatement } from "./postgres-errors.js";
import type { RotatingPassword } from "./rotating-password.js";

/** TLS to Postgres, as DB_SSL_MODE names it. */
export type DatabaseSslMode = "disable" | "require" | "verify-full";

export interface DatabaseSsl {
  /**
   * DB_SSL_MODE; `auto` takes the URL's `sslmode` (see {@link createDatabase}), else `verify-full`,
   * or `disable` for a loopback host or a socket (see {@link isLoopbackHost}).
   */
  readonly mode: DatabaseSslMode | "auto";
  /** DB_SSL_CA_FILE: the PEM bundle verify-full trusts, read once when the database is created. */
  readonly caFile: string;
}

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
   * LISTEN): `new pg.Client({ ...clientConfig, application_name })`.
   */
  readonly clientConfig: DatabaseClientConfig;
  /**
   * Ends the pool, waiting at most `timeoutMs`: `pool.end()` waits for every checked-out client, and a
   * stuck one must not eat the platform's grace period. Resolves `true` when the pool ended in time.
   */
  close(timeoutMs: number): Promise<boolean>;
}

export interface DatabaseClientConfig extends ConnectionBounds {
  /** The URL without its TLS parameters: `ssl` below is the only TLS configuration pg sees. */
  readonly connectionString: string;
  readonly ssl: false | ConnectionOptions;
  /** When set, what a connection authenticates with instead of the URL's password; see {@link newDatabaseClient}. */
  readonly rotatingPassword?: RotatingPassword;
}

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
   * {@link explainingClient}), and the LISTEN connection is replaced.
   */
  readonly query_timeout: number;
}

/**
 * The client-side bounds from the settings' timeout hierarchy (docs/configuration.md): connect and
 * first keepalive probe DB_CONNECT_TIMEOUT_MS, a query DB_STATEMENT_TIMEOUT_MS (or the longest
 * statement a transaction may set) + DB_CONNECT_TIMEOUT_MS. Omitted timeouts take their settings'
 * defaults, for a library user who gives only a URL.
 */
export function connectionBounds(
  timeouts: Partial<Pick<DatabaseSettings, "statementTimeoutMs" | "connectTimeoutMs" | "longestStatementMs">>,
): ConnectionBounds {
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

/** `sslmode` values of a URL that `auto` follows, libpq's meanings (pg's own `no-verify` is `require`). */
const URL_SSL_MODES: Readonly<Record<string, DatabaseSslMode>> = {
  disable: "disable",
  require: "require",
  "no-verify": "require",
  "verify-full": "verify-full",
};

/**
 * TLS parameters pg-connection-string would act on (reading files, or overriding our `ssl` with its
 * own). DB_SSL_MODE and DB_SSL_CA_FILE are the one place TLS is configured, so a URL carrying one of
 * these is refused rather than half-honoured.
 */
const URL_TLS_PARAMETERS = [
  "ssl",
  "sslcert",
  "sslkey",
  "sslrootcert",
  "sslcrl",
  "sslpassword",
  "sslnegotiation",
  "uselibpqcompat",
];

/**
 * A host whose traffic never leaves the machine: a loopback address or name, or a Unix socket
 * (pg's host is then a directory). The only place plain text is the default: on any other path a
 * password and every row cross a network.
 */
function isLoopbackHost(host: string): boolean {
  if (host === "" || host.startsWith("/") || host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1" || /^::ffff:127\./i.test(host);
}

/** The URL's host as pg connects to it (brackets off an IPv6 literal, a socket directory decoded). */
function hostOf(parsed: URL | null): string {
  if (parsed === null) return "";
  return decodeURIComponent(parsed.hostname.replace(/^\[(.*)\]$/, "$1"));
}

interface ResolvedSsl {
  /** Why these settings cannot work, each naming the variable to fix; the rest is unusable then. */
  readonly problems: readonly ConfigProblem[];
  readonly config: Pick<DatabaseClientConfig, "connectionString" | "ssl">;
  /** The host, when the connection is plain text to a host that is not loopback; and the setting that asked. */
  readonly plainText: { readonly host: string; readonly setting: string } | undefined;
  /** Puts the setting to change in front of a connection error's message. */
  readonly explain: (error: Error) => Error;
}

/**
 * The URL's TLS parameters, DB_SSL_MODE and DB_SSL_CA_FILE, made into pg's `ssl` option. Why not let
 * pg read `sslmode` itself: pg-connection-string takes `sslmode=require` as full verification against
 * Node's public CAs (which do not include RDS's), and a connection string's `ssl` overrides the
 * `ssl` option. So `sslmode` is removed from the URL and only decides the mode under `auto`.
 * Returns the problems rather than throwing them, so that a program's start-up check can list them
 * with every other configuration problem ({@link databaseTlsProblems}).
 */
function resolveSsl(url: string, ssl: DatabaseSsl): ResolvedSsl {
  const problems: ConfigProblem[] = [];
  // A URL the setting's check let through always parses; pg's other forms (a socket path) carry no TLS.
  const parsed = URL.canParse(url) ? new URL(url) : null;
  const params = parsed?.searchParams;
  for (const name of URL_TLS_PARAMETERS.filter((name) => params?.has(name))) {
    problems.push({
      env: "DATABASE_URL",
      message: `the URL's ${name} parameter is not used: TLS is set by DB_SSL_MODE and DB_SSL_CA_FILE (remove it from the URL)`,
    });
  }
  const urlMode = params?.get("sslmode") ?? null;
  const host = hostOf(parsed);
  const loopback = isLoopbackHost(host);
  // Without a word from the operator: plain text only where the traffic stays on this machine.
  let mode: DatabaseSslMode = loopback ? "disable" : "verify-full";
  /** Where the mode came from, as the operator would change it. */
  let setting = loopback
    ? "DB_SSL_MODE=auto (no sslmode in DATABASE_URL, and its host is loopback: plain text)"
    : "DB_SSL_MODE=auto";
  /** Why that mode, after `which … needs`: the setting, and for auto's default the reason. */
  let because = loopback
    ? setting
    : "DB_SSL_MODE=auto needs (no sslmode in DATABASE_URL, and its host is not loopback: verified TLS)";
  if (ssl.mode !== "auto") {
    mode = ssl.mode;
    setting = `DB_SSL_MODE=${mode}`;
    because = `${setting} needs`;
  } else if (urlMode !== null) {
    setting = `sslmode=${urlMode} in DATABASE_URL`;
    because = `${setting} needs`;
    const known = URL_SSL_MODES[urlMode];
    // An sslmode we refuse is the one problem: nothing else is checked for a mode nobody chose.
    mode = known ?? "disable";
    if (!known)
      problems.push({
        env: "DATABASE_URL",
        message: `sslmode=${urlMode} is not supported (no fallback between TLS and plain text, no CA-only check): use disable, require or verify-full, in the URL or in DB_SSL_MODE`,
      });
  }
  let ca = "";
  if (mode === "verify-full") {
    try {
      ca = readFileSync(ssl.caFile, "utf8");
      if (!ca.includes("-----BEGIN CERTIFICATE-----"))
        problems.push({ env: "DB_SSL_CA_FILE", message: `${ssl.caFile} holds no PEM certificate` });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      problems.push({
        env: "DB_SSL_CA_FILE",
        message: `cannot read ${ssl.caFile} (${code}), which ${because}`,
      });
    }
  }
  if (parsed && urlMode !== null) parsed.searchParams.delete("sslmode");
  const connectionString = parsed && urlMode !== null ? parsed.toString() : url;
  // pg sends the host as SNI and checks the certificate against it; an IP address is checked against
  // the certificate's IP entries instead (SNI must not carry one).
  const tls: false | ConnectionOptions =
    mode === "disable"
      ? false
      : mode === "require"
        ? { rejectUnauthorized: false }
        : { rejectUnauthorized: true, ca, ...(host !== "" && isIP(host) === 0 ? { servername: host } : {}) };
  return {
    problems,
    config: { connectionString, ssl: tls },
    plainText: mode === "disable" && !loopback ? { host, setting } : undefined,
    explain: (error) => {
      const code = (error as NodeJS.ErrnoException).code ?? "";
      let hint: string | undefined;
      if (mode === "verify-full" && isCertificateError(code))
        hint = `the server's certificate failed verification (${setting}, CA bundle DB_SSL_CA_FILE=${ssl.caFile})`;
      else if (mode !== "disable" && error.message === "The server does not support SSL connections")
        hint = `the server does not offer TLS (${setting})`;
      else if (mode === "disable" && /no encryption/.test(error.message))
        hint = `the server accepts TLS connections only (${setting}): set DB_SSL_MODE=verify-full (or require)`;
      if (hint !== undefined) error.message = `${hint}: ${error.message}`;
      return error;
    },
  };
}

/**
 * Why DB_SSL_MODE, DB_SSL_CA_FILE and the TLS parameters of `url` cannot work (each problem names
 * the variable to fix), or nothing: the check {@link createDatabase} makes, without creating
 * anything. It reads the CA bundle under verify-full, so it belongs where the program runs.
 */
export function databaseTlsProblems(url: string, ssl: DatabaseSsl): readonly ConfigProblem[] {
  return resolveSsl(url, ssl).problems;
}

/**
 * The host and the setting that asked, when `url` and `ssl` make a plain-text connection to a host
 * that is not loopback: a password and every row on a network unencrypted, which the daemons warn
 * of once at start-up. Undefined otherwise.
 */
export function plainTextConnection(
  url: string,
  ssl: DatabaseSsl,
): { readonly host: string; readonly setting: string } | undefined {
  return resolveSsl(url, ssl).plainText;
}

/** Node's codes for a certificate it would not accept (OpenSSL's X509_V_ERR_* names, the name check). */
function isCertificateError(code: string): boolean {
  return (
    code === "ERR_TLS_CERT_ALTNAME_INVALID" ||
    /^(UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_SELF_SIGNED|CERT_|INVALID_CA|HOSTNAME_MISMATCH)/.test(code)
  );
}

type ConnectCallback = (error: Error | null, client?: pg.Client) => void;

/**
 * Statements a connection keeps parsed. Kysely builds one text per query shape, so a daemon uses a few
 * dozen; the cap only matters for shapes that vary with their input (a multi-row INSERT per row count),
 * which past it run unnamed as before.
 */
const PREPARED_PER_CONNECTION = 100;

/** The message of pg's error when a query outlives `query_timeout`. */
const PG_QUERY_READ_TIMEOUT = "Query read timeout";

/** Whether pg gave up on a query that the server left unanswered past `query_timeout`. */
export function isQueryReadTimeout(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith(PG_QUERY_READ_TIMEOUT);
}

/**
 * Makes `client` authenticate with the rotating password. pg asks a function for the password when the
 * server wants one, once per connection; it has to be set on the client, not passed in its config,
 * because pg lets a `connectionString`'s (empty) password win over the config's.
 */
function authenticateWith(client: pg.Client, password: RotatingPassword): void {
  (client as unknown as { password: () => Promise<string> }).password = () => password.current();
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
  const clientConfig = { ...pgConfig, application_name: applicationName };
  if (rotatingPassword === undefined) return new pg.Client(clientConfig);
  // Like the pool's clients, a refused password makes the next connection read the secret first.
  const client = new (class RotatingPasswordClient extends pg.Client {
    override connect(): Promise<pg.Client>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<pg.Client> | undefined {
      const connecting = super.connect().catch((error: unknown) => {
        if (isPasswordRefused(error)) rotatingPassword?.refused();
        throw error;
      });
      if (callback === undefined) return connecting;
      connecting.then(
        (connected) => callback(undefined as unknown as Error, connected),
        (error: Error) => callback(error, undefined as unknown as pg.Client),
      );
      return undefined;
    }
  })(clientConfig);
  authenticateWith(client, rotatingPassword);
  return client;
}

/**
 * What a pool learns from a query left unanswered past `query_timeout`: the server, or the path to
 * it, may be gone. A failover or a frozen server leaves every connection hanging and none erroring,
 * so each idle one would be found out one `query_timeout` at a time. Every connection not answered
 * since that query was sent is suspect instead, and is replaced before the pool hands it out.
 */
class ConnectionHealth {
  #suspectBefore = Number.NEGATIVE_INFINITY;
  readonly #answeredAt = new WeakMap<pg.Client, number>();

  /** The server answered on `client` (or, for a new client, it was just made). */
  answered(client: pg.Client): void {
    this.#answeredAt.set(client, performance.now());
  }

  /** A query sent at `sentAt` was never answered. */
  unanswered(sentAt: number): void {
    this.#suspectBefore = Math.max(this.#suspectBefore, sentAt);
  }

  isSuspect(client: pg.Client): boolean {
    return (this.#answeredAt.get(client) ?? Number.NEGATIVE_INFINITY) < this.#suspectBefore;
  }
}

/**
 * pg's client, with connection errors that name the TLS setting to change ({@link resolveSsl}),
 * every parameterised statement prepared once per connection (Postgres then skips parsing and
 * analysing it again, which for a statement writing three tables costs as much as running it), and
 * a connection that left a query unanswered past `query_timeout` closed (and its pool told, see
 * {@link ConnectionHealth}), and a refused rotating password read again before the next connection.
 */
function explainingClient(
  explain: (error: Error) => Error,
  prepare: boolean,
  bounds: DatabaseClientConfig,
  health: ConnectionHealth,
): typeof pg.Client {
  return class DatabaseClient extends pg.Client {
    readonly #prepared = new Map<string, string>();
    #named = 0;

    constructor(config: pg.ClientConfig) {
      super(config);
      health.answered(this);
      if (bounds.rotatingPassword !== undefined) authenticateWith(this, bounds.rotatingPassword);
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
      error.message = `${PG_QUERY_READ_TIMEOUT}: Postgres left a query unanswered for ${bounds.query_timeout} ms (its statement timeout + DB_CONNECT_TIMEOUT_MS): its connection is closed`;
      // With a query in flight, pg's end() destroys the socket rather than waiting for a goodbye.
      this.end().catch(() => {});
    }

    // biome-ignore lint/suspicious/noExplicitAny: pg's own overloads, passed through unchanged.
    #send(config: any, values: any): Promise<pg.QueryResult> {
      if (!prepare || typeof config !== "string" || !Array.isArray(values) || values.length === 0)
        return super.query(config, values);
      let name = this.#prepared.get(config);
      if (name === undefined && this.#prepared.size < PREPARED_PER_CONNECTION) {
        name = `outbox_${this.#named++}`;
        this.#prepared.set(config, name);
      }
      if (name === undefined) return super.query(config, values);
      return (super.query({ name, text: config, values }) as Promise<pg.QueryResult>).catch(
        (error: unknown) => {
          // After an ALTER that changed what it returns, the statement fails once; its next run is
          // prepared again, under a new name.
          if (isStalePreparedStatement(error)) this.#prepared.delete(config);
          throw error;
        },
      );
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<pg.Client> | undefined {
      const failed = (error: Error): Error => {
        if (isPasswordRefused(error)) bounds.rotatingPassword?.refused();
        return explain(error);
      };
      if (callback === undefined) {
        return super.connect().catch((error: unknown) => {
          throw error instanceof Error ? failed(error) : error;
        });
      }
      // pg-pool connects this way.
      super.connect(((error: Error | null, client?: pg.Client) =>
        callback(error ? failed(error) : error, client)) as (error: Error) => void);
      return undefined;
    }
  };
}

/** pg's pool, handing out no connection its {@link ConnectionHealth} suspects: it is closed and another taken. */
class HealthCheckedPool extends pg.Pool {
  readonly #health: ConnectionHealth;

  constructor(health: ConnectionHealth, config: pg.PoolConfig) {
    super(config);
    this.#health = health;
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(
    callback: (
      error: Error | undefined,
      client: pg.PoolClient | undefined,
      done: (release?: unknown) => void,
    ) => void,
  ): void;
  override connect(
    callback?: (
      error: Error | undefined,
      client: pg.PoolClient | undefined,
      done: (release?: unknown) => void,
    ) => void,
  ): Promise<pg.PoolClient> | undefined {
    const connecting = this.#connectHealthy();
    if (callback === undefined) return connecting;
    // pg-pool's own pool.query connects this way.
    connecting.then(
      (client) =>
        callback(undefined, client, (release) => client.release(release as boolean | Error | undefined)),
      (error: Error) => callback(error, undefined, () => {}),
    );
    return undefined;
  }

  async #connectHealthy(): Promise<pg.PoolClient> {
    for (;;) {
      const client = await super.connect();
      if (!this.#health.isSuspect(client as unknown as pg.Client)) return client;
      // Destroyed, not returned: the pool opens a new connection in its place.
      client.release(true);
    }
  }
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
  const pool = new HealthCheckedPool(health, {
    ...clientConfig,
    Client: explainingClient(explain, settings.preparedStatements ?? true, clientConfig, health),
    ...poolBounds(settings),
    idleTimeoutMillis: 30_000,
    application_name: settings.service,
    // Server-side limits: they hold even when this process is frozen or its timers are late.
    statement_timeout: settings.statementTimeoutMs,
    idle_in_transaction_session_timeout: settings.idleInTransactionTimeoutMs,
    options: `-c plan_cache_mode=${settings.planCacheMode ?? "force_custom_plan"}`,
  });
  // A server restart or failover makes every connection emit 'error'. The pool re-emits it for idle
  // clients, and a checked-out client emits it on itself; unheard, either crashes the process. The
  // query in progress rejects on its own and the broken client is discarded, so the listeners only
  // keep a database blip from becoming a crash.
  pool.on("error", () => {});
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  // Checked out now. When the pool closes, its user is done with it: a client still out was
  // abandoned by a drain that gave up on it, on a server that does not answer.
  const checkedOut = new Set<pg.PoolClient>();
  pool.on("acquire", (client) => checkedOut.add(client));
  pool.on("release", (_error, client) => checkedOut.delete(client));
  pool.on("remove", (client) => checkedOut.delete(client as pg.PoolClient));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  let closing: Promise<void> | undefined;
  return {
    db,
    pool,
    clientConfig,
    async close(timeoutMs) {
      closing ??= (() => {
        const ended = db.destroy();
        // pool.end() waits for every checked-out client; an abandoned one would hold the close (and
        // the stop) until its query_timeout. With a query in flight, end() destroys the socket.
        for (const client of checkedOut) (client as unknown as pg.Client).end().catch(() => {});
        return ended;
      })();
      return settlesWithin(closing, timeoutMs);
    },
  };
}
