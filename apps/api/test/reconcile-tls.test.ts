import type { DatabaseHandle } from "@outbox/shared";
import { hangLimit, runEntryPoint, startTlsPostgres, type TlsPostgres } from "@outbox/test-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { migrateApiTables } from "../src/db/migrate.js";

// Its tests start a program: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 1 }) });

// `api reconcile` runs as a scheduled task against RDS, which refuses plain-text connections: the
// command must apply DB_SSL_MODE and DB_SSL_CA_FILE like the service does.
describe("api reconcile on a Postgres that accepts TLS only (RDS)", () => {
  let tls: TlsPostgres;
  let url: string;
  let handle: DatabaseHandle;
  beforeAll(async () => {
    tls = await startTlsPostgres();
    ({ url, handle } = await tls.createMigratedDatabase("api_reconcile_tls", "api-reconcile-tls-test"));
    await migrateApiTables(handle.db);
  });
  afterAll(async () => {
    await handle?.close(5_000);
    await tls?.stop();
  });

  it("with DB_SSL_MODE=verify-full and the CA it connects verified, runs its pass and exits 0", async () => {
    const run = await runEntryPoint("apps/api/src/main.ts", ["reconcile"], {
      DATABASE_URL: url,
      DB_SSL_MODE: "verify-full",
      DB_SSL_CA_FILE: tls.caFile,
      // Nothing is pending, so the equipment service is never called.
      API_EQUIPMENT_URL: "http://127.0.0.1:1",
    });
    expect({ code: run.code, stderr: run.stderr }, run.stdout).toEqual({ code: 0, stderr: "" });
    const done = run.stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { msg?: string })
      .find((line) => line.msg === "reconciliation done");
    expect(done).toMatchObject({ attempted: 0, linked: 0, failed: 0 });
  });

  it("with DB_SSL_MODE=verify-full and another CA it fails, naming the settings", async () => {
    const run = await runEntryPoint("apps/api/src/main.ts", ["reconcile"], {
      DATABASE_URL: url,
      DB_SSL_MODE: "verify-full",
      DB_SSL_CA_FILE: tls.wrongCaFile,
      API_EQUIPMENT_URL: "http://127.0.0.1:1",
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("the server's certificate failed verification (DB_SSL_MODE=verify-full");
  });
});
