import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import type { ConnectionOptions } from "node:tls";
import type { ConfigProblem } from "../config/config-error.js";

/** TLS to Postgres, as DB_SSL_MODE names it. */
export type DatabaseSslMode = "disable" | "require" | "verify-full";

export interface DatabaseSsl {
  /**
   * DB_SSL_MODE; `auto` takes the URL's `sslmode` (see {@link resolveSsl}), else `verify-full`,
   * or `disable` for a loopback host or a socket (see {@link isLoopbackHost}).
   */
  readonly mode: DatabaseSslMode | "auto";
  /** DB_SSL_CA_FILE: the PEM bundle verify-full trusts, read once when the database is created. */
  readonly caFile: string;
}

/** Where pg connects and how: the URL without its TLS parameters, and pg's `ssl` option, the only TLS configuration pg sees. */
export interface TlsTarget {
  readonly connectionString: string;
  readonly ssl: false | ConnectionOptions;
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
  readonly config: TlsTarget;
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
export function resolveSsl(url: string, ssl: DatabaseSsl): ResolvedSsl {
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
 * the variable to fix), or nothing: the check createDatabase makes, without creating
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
