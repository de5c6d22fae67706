import { createServer } from "node:net";
import { Deadline } from "@outbox/client";
import { type EquipmentStub, startEquipmentStub } from "@outbox/devstack";
import { waitUntil } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createDatabase, createMigratedTestDatabase, type DatabaseHandle } from "./photo-database.js";
import { startTestPhotoServer, type TestPhotoServer } from "./photo-server.js";

// A database the service cannot use right now is not the service's bug: every pooled connection is
// held, or Postgres does not accept connections (a failover, a restart). The caller is told to come
// back (503 + Retry-After), not that we failed (500).
const CONNECT_TIMEOUT_MS = 300;
/** The first request holds the pool's only connection this long: far past the second's wait. */
const HOLD_MS = 5_000;

let url: string;
let setup: DatabaseHandle;
let stub: EquipmentStub;
const handles: DatabaseHandle[] = [];
const servers: TestPhotoServer[] = [];

beforeAll(async () => {
  ({ url, handle: setup } = await createMigratedTestDatabase("api_unavailable", {
    service: "api-unavailable-setup",
    poolMax: 1,
  }));
  stub = await startEquipmentStub();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((api) => api.server.stop(Deadline.after(HOLD_MS + 5_000))));
  await Promise.all(handles.splice(0).map((handle) => handle.close(5_000)));
});
afterAll(async () => {
  await stub.close();
  await setup.close(5_000);
});

async function serveOn(databaseUrl: string, commitDelayMs: number): Promise<TestPhotoServer> {
  const database = createDatabase({
    url: databaseUrl,
    service: "api-unavailable",
    poolMax: 1,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: HOLD_MS * 2,
  });
  handles.push(database);
  const api = await startTestPhotoServer(database, stub, { commitDelayMs });
  servers.push(api);
  return api;
}

function post(api: TestPhotoServer, title: string): Promise<Response> {
  return fetch(`${api.baseUrl}/photos`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ title, gearIds: [] }),
  });
}

/** A loopback port nothing listens on: Postgres "down". */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  await new Promise((resolve) => server.close(resolve));
  return address.port;
}

describe("a database the service cannot use answers 503 with Retry-After", () => {
  it("a request that finds every pooled connection held past DB_CONNECT_TIMEOUT_MS", async () => {
    const api = await serveOn(url, HOLD_MS);
    const first = post(api, "holds-the-pool");
    // Postgres' own view: the pool's one connection sits in the first request's open transaction.
    await waitUntil(
      "the first request to hold the pool's connection in its transaction",
      async () => {
        const { rows } = await sql<{ holding: number }>`
          SELECT count(*)::int AS holding FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'api-unavailable'
            AND state = 'idle in transaction'
        `.execute(setup.db);
        return rows[0]?.holding === 1;
      },
      { timeoutMs: HOLD_MS / 2 },
    );
    const second = await post(api, "finds-no-connection");
    expect(second.status).toBe(503);
    expect(second.headers.get("retry-after")).toBe("1");
    expect(await second.json()).toEqual({
      error: "the database is unavailable or has no free connection: retry later",
    });
    // The one that held the connection is served.
    expect((await first).status).toBe(201);
  });

  it("a request while Postgres refuses connections", async () => {
    const down = new URL(url);
    down.port = String(await closedPort());
    const api = await serveOn(down.toString(), 0);
    const answer = await post(api, "postgres-down");
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("1");
  });
});
