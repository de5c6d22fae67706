import { Deadline, REQUEST_TIMEOUT_HEADER } from "@outbox/client";
import { type EquipmentStub, startEquipmentStub } from "@outbox/devstack";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createDatabase, createMigratedTestDatabase, type DatabaseHandle } from "./photo-database.js";
import { startTestPhotoServer, type TestPhotoServer } from "./photo-server.js";

// A Postgres that keeps its connections open and answers nothing (a failover, a NAT that dropped the
// flow): the backends serving the service's pool are frozen with SIGSTOP, found by their
// application_name in pg_stat_activity. The server is shared by every test file of the run, so each
// frozen backend is always continued (afterEach), whatever the test did.
const SERVICE = "api-hung-db";
const HANDLER_TIMEOUT_MS = 20_000;
const DEADLINE_MS = 1_000;
/** The old behaviour answered at the handler cap (25 s in production, 20 s here) or later. */
const WELL_UNDER_THE_HANDLER_CAP = HANDLER_TIMEOUT_MS / 2;

let database: DatabaseHandle;
let observer: DatabaseHandle;
let stub: EquipmentStub;
let api: TestPhotoServer;
let frozen: number[] = [];

beforeAll(async () => {
  const created = await createMigratedTestDatabase("api_hung", { service: SERVICE, poolMax: 4 });
  database = created.handle;
  observer = createDatabase({
    url: created.url,
    service: `${SERVICE}-observer`,
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 10_000,
  });
  stub = await startEquipmentStub();
  api = await startTestPhotoServer(database, stub, {
    handlerTimeoutMs: HANDLER_TIMEOUT_MS,
    requestTimeoutMs: HANDLER_TIMEOUT_MS + 5_000,
  });
});
afterEach(() => thaw());
afterAll(async () => {
  thaw();
  await api.server.stop(Deadline.after(5_000));
  await stub.close();
  await observer.close(5_000);
  await database.close(5_000);
});

function thaw(): void {
  for (const pid of frozen) {
    try {
      process.kill(pid, "SIGCONT");
    } catch {
      // The backend is gone already.
    }
  }
  frozen = [];
}

/** Stops every backend of the service's pool; returns how many. */
async function freezeServiceBackends(): Promise<number> {
  const { rows } = await sql<{ pid: number }>`
    SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = ${SERVICE}
  `.execute(observer.db);
  for (const { pid } of rows) {
    process.kill(pid, "SIGSTOP");
    frozen.push(pid);
  }
  return rows.length;
}

async function timed(path: string, init: RequestInit): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${api.baseUrl}${path}`, init);
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

const post = (headers: Record<string, string> = {}) =>
  timed("/photos", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ title: "frozen", gearIds: [] }),
  });

describe("a database that stops answering", () => {
  it("answers 504 at the request's deadline, every request, and the pool works again once Postgres answers", async () => {
    expect((await post()).status).toBe(201);
    const existing = await database.db.selectFrom("photos").select("id").executeTakeFirstOrThrow();
    // Every client of the pool open (poolMax 4) and idle, so every one it hands out is frozen.
    const clients = await Promise.all(Array.from({ length: 4 }, () => database.pool.connect()));
    for (const client of clients) client.release();
    expect(await freezeServiceBackends()).toBe(4);

    // More requests than the pool has clients: those waiting for a client keep their deadline too.
    // A waiter may get a fresh connection (to a backend not frozen) once a frozen one is destroyed:
    // then it is answered normally, but never later than its deadline allows.
    const deadline = { [REQUEST_TIMEOUT_HEADER]: String(DEADLINE_MS) };
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, () => post(deadline)),
      timed(`/photos/${existing.id}`, { headers: deadline }),
    ]);
    expect(answers.filter((answer) => answer.status === 504).length).toBeGreaterThanOrEqual(4);
    for (const answer of answers) {
      expect([504, 201, 200]).toContain(answer.status);
      if (answer.status === 504) expect(answer.ms).toBeGreaterThanOrEqual(DEADLINE_MS * 0.9);
      expect(answer.ms).toBeLessThan(WELL_UNDER_THE_HANDLER_CAP);
    }

    thaw();
    const after = await post();
    expect(after.status).toBe(201);
    expect((await timed(`/photos/${existing.id}`, {})).status).toBe(200);
    // The abandoned clients were destroyed, not handed out again: the pool is within its size.
    expect(database.pool.totalCount).toBeLessThanOrEqual(4);
    expect(database.pool.waitingCount).toBe(0);
  }, 60_000);
});
