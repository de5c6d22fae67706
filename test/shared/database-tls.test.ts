import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import {
  ConfigError,
  commonSettings,
  createDatabase,
  type DatabaseHandle,
  type DatabaseSsl,
  plainTextConnection,
} from "@outbox/shared";
import { startTlsPostgres, type TlsPostgres } from "@outbox/test-kit";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

const open: DatabaseHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((handle) => handle.close(5_000)));
});

function database(url: string, ssl?: DatabaseSsl): DatabaseHandle {
  const handle = createDatabase({
    url,
    service: "tls-test",
    poolMax: 2,
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 5_000,
    ...(ssl ? { ssl } : {}),
  });
  open.push(handle);
  return handle;
}

async function encrypted(handle: DatabaseHandle): Promise<boolean> {
  const { rows } = await sql<{ ssl: boolean }>`
    SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()
  `.execute(handle.db);
  return rows[0]?.ssl ?? false;
}

const plainTextHost = (url: string, ssl: DatabaseSsl) => plainTextConnection(url, ssl)?.host;

/** The ConfigError's problems, or a failure when it does not throw one. */
function problemsOf(url: string, ssl?: DatabaseSsl): readonly { env: string; message: string }[] {
  try {
    database(url, ssl);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("createDatabase accepted the settings");
}

const missing = "/nonexistent/rds-global-bundle.pem";

describe("createDatabase against a server that accepts TLS only", () => {
  let tls: TlsPostgres;
  let url: string;
  beforeAll(async () => {
    tls = await startTlsPostgres();
    url = await tls.createDatabase("tls");
  });
  afterAll(() => tls?.stop());

  const withHost = (host: string, query = "") => {
    const next = new URL(url);
    next.hostname = host;
    next.search = query;
    return next.toString();
  };

  it("verify-full with the server's CA connects encrypted, by address and by name", async () => {
    for (const host of ["127.0.0.1", "localhost"]) {
      const handle = database(withHost(host), { mode: "verify-full", caFile: tls.caFile });
      expect(await encrypted(handle), host).toBe(true);
    }
  });

  it("verify-full with another CA fails within the connection timeout, naming the settings", async () => {
    const handle = database(url, { mode: "verify-full", caFile: tls.wrongCaFile });
    const started = performance.now();
    const error = await sql`SELECT 1`.execute(handle.db).then(
      () => null,
      (failure: Error) => failure,
    );
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(error?.message).toMatch(
      /^the server's certificate failed verification \(DB_SSL_MODE=verify-full, CA bundle DB_SSL_CA_FILE=.*wrong-ca\.pem\): /,
    );
  });

  it("require connects encrypted without any CA (and does not verify the server)", async () => {
    const handle = database(url, { mode: "require", caFile: missing });
    expect(await encrypted(handle)).toBe(true);
  });

  it("disable is refused by the server, and the error says which setting to change", async () => {
    const handle = database(url, { mode: "disable", caFile: missing });
    await expect(sql`SELECT 1`.execute(handle.db)).rejects.toThrow(
      /^the server accepts TLS connections only \(DB_SSL_MODE=disable\): set DB_SSL_MODE=verify-full \(or require\): no pg_hba\.conf entry/,
    );
  });

  it("auto follows the URL's sslmode with libpq's meanings: require does not verify (pg alone would)", async () => {
    // The issue: pg reads sslmode=require as verify-full against Node's public CAs.
    const plainPg = new pg.Client({ connectionString: withHost("127.0.0.1", "?sslmode=require") });
    await expect(plainPg.connect()).rejects.toThrow(/certificate/);
    await plainPg.end().catch(() => {});
    expect(await encrypted(database(withHost("127.0.0.1", "?sslmode=require")))).toBe(true);
    const verified = database(withHost("localhost", "?sslmode=verify-full"), {
      mode: "auto",
      caFile: tls.caFile,
    });
    expect(await encrypted(verified)).toBe(true);
    const wrong = database(withHost("localhost", "?sslmode=verify-full"), {
      mode: "auto",
      caFile: tls.wrongCaFile,
    });
    await expect(sql`SELECT 1`.execute(wrong.db)).rejects.toThrow(
      /failed verification \(sslmode=verify-full in DATABASE_URL, CA bundle DB_SSL_CA_FILE=/,
    );
  });

  it("DB_SSL_MODE wins over the URL's sslmode, which never reaches pg", async () => {
    const handle = database(withHost("localhost", "?sslmode=disable&application_name=ignored"), {
      mode: "verify-full",
      caFile: tls.caFile,
    });
    expect(handle.clientConfig.connectionString).not.toContain("sslmode");
    expect(handle.clientConfig.connectionString).toContain("application_name=ignored");
    expect(await encrypted(handle)).toBe(true);
  });
});

describe("TLS settings that cannot work are a ConfigError before any connection", () => {
  const url = "postgres://app:secret@db.example.com:5432/app";

  it("verify-full with an unreadable CA bundle, or one without a certificate", () => {
    expect(problemsOf(url, { mode: "verify-full", caFile: missing })).toEqual([
      {
        env: "DB_SSL_CA_FILE",
        message: `cannot read ${missing} (ENOENT), which DB_SSL_MODE=verify-full needs`,
      },
    ]);
    const notPem = join(import.meta.dirname, "..", "package.json");
    expect(problemsOf(`${url}?sslmode=verify-full`, { mode: "auto", caFile: notPem })).toEqual([
      { env: "DB_SSL_CA_FILE", message: `${notPem} holds no PEM certificate` },
    ]);
  });

  it("an sslmode pg cannot honour, or TLS parameters that would bypass the settings", () => {
    expect(problemsOf(`${url}?sslmode=prefer`)).toEqual([
      {
        env: "DATABASE_URL",
        message:
          "sslmode=prefer is not supported (no fallback between TLS and plain text, no CA-only check): use disable, require or verify-full, in the URL or in DB_SSL_MODE",
      },
    ]);
    expect(
      problemsOf(`${url}?sslrootcert=/tmp/ca.pem&ssl=true`, { mode: "require", caFile: missing }).map(
        (problem) => problem.message,
      ),
    ).toEqual([
      "the URL's ssl parameter is not used: TLS is set by DB_SSL_MODE and DB_SSL_CA_FILE (remove it from the URL)",
      "the URL's sslrootcert parameter is not used: TLS is set by DB_SSL_MODE and DB_SSL_CA_FILE (remove it from the URL)",
    ]);
  });

  it("require and disable read no CA bundle; the messages never show the URL", () => {
    for (const mode of ["require", "disable"] as const) {
      expect(database(url, { mode, caFile: missing }).clientConfig.ssl).toEqual(
        mode === "require" ? { rejectUnauthorized: false } : false,
      );
    }
    const messages = problemsOf(`${url}?sslmode=allow`).map((problem) => problem.message);
    expect(messages.join("\n")).not.toContain("secret");
  });

  it("verify-full names the host for SNI and the name check, but never an IP address", () => {
    // Read and checked for a PEM block here; parsed only by the TLS handshake.
    const dir = mkdtempSync(join(tmpdir(), "outbox-ca-"));
    const ca = join(dir, "ca.pem");
    writeFileSync(ca, "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n");
    try {
      expect(database(url, { mode: "verify-full", caFile: ca }).clientConfig.ssl).toMatchObject({
        rejectUnauthorized: true,
        servername: "db.example.com",
      });
      const byAddress = database("postgres://app@10.0.0.1/app", { mode: "verify-full", caFile: ca });
      expect(byAddress.clientConfig.ssl).not.toHaveProperty("servername");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("DB_SSL_MODE=auto without sslmode in the URL: verified TLS unless the host is loopback", () => {
  let dir: string;
  let ca: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "outbox-ca-"));
    ca = join(dir, "ca.pem");
    writeFileSync(ca, "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a loopback host or a socket: plain text, as before", () => {
    for (const url of [
      "postgres://app@127.0.0.1:5432/app",
      "postgres://app@127.0.0.2/app",
      "postgres://app@localhost/app",
      "postgres://app@[::1]/app",
      "postgres://app@%2Fvar%2Frun%2Fpostgresql/app",
    ]) {
      expect(database(url).clientConfig.ssl, url).toBe(false);
      expect(plainTextHost(url, { mode: "auto", caFile: missing }), url).toBeUndefined();
    }
  });

  it("any other host: verify-full against DB_SSL_CA_FILE, its name checked", () => {
    expect(
      database("postgres://app@db.example.com/app", { mode: "auto", caFile: ca }).clientConfig.ssl,
    ).toMatchObject({
      rejectUnauthorized: true,
      servername: "db.example.com",
    });
    expect(
      database("postgres://app@10.0.0.1/app", { mode: "auto", caFile: ca }).clientConfig.ssl,
    ).toMatchObject({
      rejectUnauthorized: true,
    });
  });

  it("by default that is RDS's bundle, so a host outside this machine without it is refused before connecting, naming why", () => {
    expect(problemsOf("postgres://app@db.example.com/app")).toEqual([
      {
        env: "DB_SSL_CA_FILE",
        message: `cannot read ${commonSettings.dbSslCaFile.default} (ENOENT), which DB_SSL_MODE=auto needs (no sslmode in DATABASE_URL, and its host is not loopback: verified TLS)`,
      },
    ]);
  });

  it("plain text to a host that is not loopback, asked for by DB_SSL_MODE or the URL, is named for the start-up warning", () => {
    expect(plainTextHost("postgres://app@db.example.com/app", { mode: "disable", caFile: missing })).toBe(
      "db.example.com",
    );
    expect(
      plainTextHost("postgres://app@10.0.0.1/app?sslmode=disable", { mode: "auto", caFile: missing }),
    ).toBe("10.0.0.1");
    expect(
      plainTextHost("postgres://app@db.example.com/app", { mode: "require", caFile: missing }),
    ).toBeUndefined();
  });
});
