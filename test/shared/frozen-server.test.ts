import { performance } from "node:perf_hooks";
import { createDatabase, type DatabaseHandle } from "@outbox/shared";
import { createTestDatabase, freezeBackends, thawAllBackends } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

// Short timeouts, so that the client-side bound they derive is quick to reach.
const statementTimeoutMs = 300;
const connectTimeoutMs = 400;
const service = "frozen-server-test";

let handle: DatabaseHandle;
/** Looks the pool's backends up from a connection of its own. */
let observer: DatabaseHandle;

beforeAll(async () => {
  const url = await createTestDatabase("frozen_server");
  observer = createDatabase({
    url,
    service: "frozen-server-observer",
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 10_000,
  });
  handle = createDatabase({
    url,
    service,
    poolMax: 1,
    statementTimeoutMs,
    connectTimeoutMs,
    idleInTransactionTimeoutMs: 10_000,
  });
});
afterEach(thawAllBackends);
afterAll(() => Promise.all([handle.close(5_000), observer.close(5_000)]));

const backendPid = async () =>
  (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(handle.db)).rows[0]?.pid;

describe("a pool whose server stops answering", () => {
  it("derives keepalive, the connect timeout and a per-query bound from the timeout settings", () => {
    expect(handle.clientConfig).toMatchObject({
      keepAlive: true,
      keepAliveInitialDelayMillis: connectTimeoutMs,
      connectionTimeoutMillis: connectTimeoutMs,
      query_timeout: statementTimeoutMs + connectTimeoutMs,
    });
  });

  it("rejects a query client-side at statement timeout + connect timeout, and closes that connection", async () => {
    const frozenPid = await backendPid();
    const frozen = await freezeBackends(observer.db, { applicationNames: [service], idleOnly: true });
    expect(frozen.pids).toEqual([frozenPid]);

    const started = performance.now();
    const unanswered = await backendPid().then(
      () => undefined,
      (error: unknown) => error,
    );
    const waitedMs = performance.now() - started;
    expect(unanswered).toBeInstanceOf(Error);
    expect((unanswered as Error).message).toMatch(
      /^Query read timeout: Postgres left a query unanswered for 700 ms .*: its connection is closed$/,
    );
    // The server's own statement_timeout cannot fire in a frozen process: the client's bound did.
    expect(waitedMs).toBeGreaterThanOrEqual(statementTimeoutMs + connectTimeoutMs - 5);

    // Still frozen: the next query gets a new connection instead of queueing behind the one that
    // never ends.
    const nextPid = await backendPid();
    expect(nextPid).toBeTypeOf("number");
    expect(nextPid).not.toBe(frozenPid);
    frozen.thaw();
  });

  it("after one unanswered query, replaces every idle connection not answered since, instead of meeting each frozen one", async () => {
    const url = await createTestDatabase("frozen_server_pool");
    const pooled = "frozen-server-pool-test";
    const pool = createDatabase({
      url,
      service: pooled,
      poolMax: 3,
      statementTimeoutMs,
      connectTimeoutMs,
      idleInTransactionTimeoutMs: 10_000,
    });
    const watcher = createDatabase({
      url,
      service: "frozen-server-pool-observer",
      statementTimeoutMs: 5_000,
      idleInTransactionTimeoutMs: 10_000,
    });
    try {
      const pidOf = async () =>
        (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(pool.db)).rows[0]?.pid;
      // Three connections at once, then all three idle in the pool, as after a busy moment.
      const opened = await Promise.all(
        [1, 2, 3].map(
          async () =>
            (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid, pg_sleep(0.05)`.execute(pool.db))
              .rows[0]?.pid,
        ),
      );
      expect(new Set(opened).size).toBe(3);
      const frozen = await freezeBackends(watcher.db, { applicationNames: [pooled], idleOnly: true });
      expect(frozen.pids).toHaveLength(3);

      await expect(pidOf()).rejects.toThrow(/^Query read timeout/);
      // The other two idle connections were sent nothing: each query gets a fresh connection at once.
      const after = [await pidOf(), await pidOf()];
      expect(after.every((pid) => typeof pid === "number" && !frozen.pids.includes(pid))).toBe(true);
      frozen.thaw();
    } finally {
      await Promise.all([pool.close(5_000), watcher.close(5_000)]);
    }
  });
});
