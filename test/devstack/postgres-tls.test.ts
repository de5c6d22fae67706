import { readFileSync } from "node:fs";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { startTlsPostgres, type TlsPostgres } from "@outbox/test-kit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

describe("embedded Postgres with tls", () => {
  let tls: TlsPostgres;
  beforeAll(async () => {
    tls = await startTlsPostgres();
  });
  afterAll(() => tls?.stop());

  const query = async (config: pg.ClientConfig, text: string) => {
    const client = new pg.Client({
      port: tls.server.port,
      user: "postgres",
      password: "postgres",
      ...config,
    });
    try {
      await client.connect();
      return (await client.query(text)).rows;
    } finally {
      await client.end().catch(() => {});
    }
  };

  it("serves TLS with the given certificate, verifiable by its CA, by name and by address", async () => {
    const ca = readFileSync(tls.caFile, "utf8");
    for (const host of ["localhost", "127.0.0.1"]) {
      const rows = await query(
        { host, ssl: { ca, rejectUnauthorized: true } },
        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
      );
      expect(rows, host).toEqual([{ ssl: true }]);
    }
  });

  it("refuses plain-text connections, as RDS does with rds.force_ssl", async () => {
    await expect(query({ host: "127.0.0.1", ssl: false }, "SELECT 1")).rejects.toThrow(
      /no pg_hba\.conf entry .*no encryption/,
    );
  });

  it("keeps the key readable by the server's user only", async () => {
    const dataDir = await stat(tls.server.dataDir);
    const key = await stat(join(tls.server.dataDir, "server.key"));
    expect(key.mode & 0o777).toBe(0o600);
    expect({ uid: key.uid, gid: key.gid }).toEqual({ uid: dataDir.uid, gid: dataDir.gid });
  });

  it("gives an admin URL that asks for TLS", async () => {
    expect(new URL(tls.server.adminUrl).searchParams.get("sslmode")).toBe("no-verify");
    const rows = await query(
      { connectionString: tls.server.adminUrl },
      "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
    );
    expect(rows).toEqual([{ ssl: true }]);
  });
});
