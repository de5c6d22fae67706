/**
 * The Postgres errors the code acts on, by SQLSTATE: the one place that knows the codes
 * (https://www.postgresql.org/docs/current/errcodes-appendix.html). pg rejects with its
 * DatabaseError, carrying `code` and, for a constraint's violation, `constraint`; the check is on
 * those fields, not on the class, so that an error of another copy of pg is recognised too.
 */
const SQLSTATE = {
  /** A cancel: `statement_timeout` (a deadline transaction's SET LOCAL) or pg_cancel_backend. */
  queryCanceled: "57014",
  uniqueViolation: "23505",
  /** Raised, among others, as "cached plan must not change result type". */
  featureNotSupported: "0A000",
  /** The password was wrong: after a rotation, the one this process still has. */
  invalidPassword: "28P01",
  /** A statement sent after another failed in the same transaction: only ROLLBACK is taken now. */
  inFailedTransaction: "25P02",
  /** `prepared statement "…" already exists`. */
  duplicatePreparedStatement: "42P05",
  /** `prepared statement "…" does not exist`. */
  invalidStatementName: "26000",
} as const;

interface PostgresErrorFields {
  readonly code?: unknown;
  readonly constraint?: unknown;
}

function fields(error: unknown): PostgresErrorFields {
  return typeof error === "object" && error !== null ? (error as PostgresErrorFields) : {};
}

/** Postgres cancelled the statement: its statement timeout ran out (or someone cancelled it). */
export function isQueryCanceled(error: unknown): boolean {
  return fields(error).code === SQLSTATE.queryCanceled;
}

/** A unique constraint refused the row; with `constraint`, that constraint and no other. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const { code, constraint: violated } = fields(error);
  return code === SQLSTATE.uniqueViolation && (constraint === undefined || violated === constraint);
}

/** Postgres refusing a prepared statement whose result columns a migration changed since. */
export function isStalePreparedStatement(error: unknown): boolean {
  return fields(error).code === SQLSTATE.featureNotSupported;
}

/**
 * The server's prepared statements are not what the connection prepared: a name it prepared is
 * missing, or one it never prepared is taken. A pooler in transaction mode does this (it hands the
 * client's statements to whichever server connection is free), and so does a server swapped under a
 * connection: the connection layer's doing, never a statement's.
 */
export function isPreparedStatementClash(error: unknown): boolean {
  const { code } = fields(error);
  return code === SQLSTATE.duplicatePreparedStatement || code === SQLSTATE.invalidStatementName;
}

/** The transaction had already failed (a statement's error the work caught): nothing it did remains. */
export function isInFailedTransaction(error: unknown): boolean {
  return fields(error).code === SQLSTATE.inFailedTransaction;
}

/** Postgres refused the password a connection authenticated with. */
export function isPasswordRefused(error: unknown): boolean {
  return fields(error).code === SQLSTATE.invalidPassword;
}

/**
 * The fields of pg's DatabaseError that quote the data itself, never logged: `detail` (`Key
 * (email)=(alice@example.com) already exists.`), `hint`, `where` (the context, which may quote a
 * statement's values) and `internalQuery`. What stays says what failed and where: `code` (the
 * SQLSTATE), `severity`, `schema`, `table`, `column`, `dataType`, `constraint`, `routine`.
 */
const DATA_FIELDS: ReadonlySet<string> = new Set(["detail", "hint", "where", "internalQuery"]);

/** An error Postgres sent (pg's DatabaseError, of any copy of pg): a five-character SQLSTATE and a severity. */
export function isPostgresError(value: object): boolean {
  const { code, severity } = value as { code?: unknown; severity?: unknown };
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && typeof severity === "string";
}

/** Whether a field of a Postgres error quotes data (see DATA_FIELDS). */
export function isPostgresDataField(field: string): boolean {
  return DATA_FIELDS.has(field);
}

// A data exception (SQLSTATE class 22) quotes the value it refused: `invalid input syntax for type
// integer: "alice@example.com"`, `value "123456789012" is out of range for type integer`.
const quotedValue = /"(?:[^"]|"")*"/g;

/** A Postgres error's message (or stack) without the value a data exception quotes; other classes quote only names. */
export function postgresTextWithoutData(code: string, text: string): string {
  return code.startsWith("22") ? text.replace(quotedValue, '"[REDACTED]"') : text;
}

/**
 * Node's socket errors that say the server, or the way to it, is gone: refused, reset, timed out,
 * unreachable, or its name unresolvable (a failover's DNS switch in progress).
 */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * Server-side connection loss: class 08 (connection exception: PgBouncer's own errors, `pgbouncer
 * cannot connect to server`, `query_wait_timeout`, `server conn crashed?`, are 08P01), and the shutdowns a failover or a
 * restart sends before it closes the socket (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03
 * cannot_connect_now while the server starts).
 */
function isConnectionState(code: unknown): boolean {
  return typeof code === "string" && (code.startsWith("08") || /^57P0[123]$/.test(code));
}

/**
 * pg's own words for a connection it lost or could not make: the socket ended under a query, the
 * connect (or the pool's wait for a client) timed out, a query went unanswered past `query_timeout`.
 */
const PG_CONNECTION_MESSAGES = [
  "Connection terminated",
  "timeout exceeded when trying to connect",
  "Query read timeout",
  "Client has encountered a connection error and is not queryable",
  "Client was closed and is not queryable",
  // libpq's words, which poolers (PgBouncer, RDS Proxy) pass on from their server connection.
  "server closed the connection unexpectedly",
];

/**
 * What the connection layer broke, as Postgres or a pooler speaking its protocol said it (a
 * DatabaseError, never a socket code that a handler's HTTP call could give too): a connection
 * exception or shutdown (class 08, 57P0x: PgBouncer's own errors among them) or a prepared statement
 * that clashed with the server's. Never the work's fault, even while the database answers.
 */
export function connectionLayerFaultIn(error: unknown): Error | undefined {
  const failure = connectionFailureIn(error);
  if (failure === undefined || !isPostgresError(failure)) return undefined;
  return failure;
}

/** How deep a chain of causes is followed: a wrapper of a wrapper, never a cycle. */
const MAX_CAUSES = 5;

/**
 * The connection failure in `error` or its causes: the server (or the way to it) failed, not a
 * statement. A constraint violation, a cancel or a syntax error is never one. Undefined when there
 * is none. Says nothing about which server: an error a handler's HTTP call threw looks the same, so
 * a caller that acts on it checks the database itself (the consumer probes it).
 */
export function connectionFailureIn(error: unknown): Error | undefined {
  try {
    let current: unknown = error;
    for (let depth = 0; depth < MAX_CAUSES && current instanceof Error; depth += 1) {
      const { code } = fields(current);
      if (typeof code === "string" && SOCKET_CODES.has(code)) return current;
      if (isConnectionState(code) || isPreparedStatementClash(current)) return current;
      const { message } = current;
      if (typeof message === "string" && PG_CONNECTION_MESSAGES.some((words) => message.startsWith(words))) {
        return current;
      }
      current = current.cause;
    }
  } catch {
    // A handler may throw anything, even a revoked Proxy that `instanceof` cannot look at: not ours.
  }
  return undefined;
}
