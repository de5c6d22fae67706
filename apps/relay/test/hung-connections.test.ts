import { performance } from "node:perf_hooks";
import { OUTBOX_LOCK_SPACE, RELAY_ASLEEP_LOCK } from "@outbox/client/internal";
import { awsEnvironment } from "@outbox/devstack";
import {
  capturingLogger,
  type DaemonProcess,
  freezeBackends,
  hangLimit,
  stack,
  startDaemonProcess,
  thawAllBackends,
} from "@outbox/test-kit";
import { sql } from "kysely";
import { afterEach, describe, expect, it, vi } from "vitest";
import { clearOutbox, countRows, enqueueAll, events, useRelayTestBed } from "./harness.js";

// Its tests start a program: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 1 }) });

// A frozen Postgres backend (SIGSTOP: the process and its connection stay, nothing is answered) is
// what a failed-over server or a NAT that forgot the flow looks like to the relay.
const pollIntervalMs = 200;
const bed = useRelayTestBed("hung", { defaults: { pollIntervalMs } });

const daemons: DaemonProcess[] = [];
afterEach(async () => {
  thawAllBackends();
  for (const daemon of daemons.splice(0)) {
    daemon.child.kill("SIGKILL");
    await daemon.exited;
  }
  await bed.stopAll();
  await clearOutbox(bed.handle);
  // A thawed backend whose client hung up ends, and its asleep lock with it: the next test starts
  // with no relay session left over.
  await expect.poll(asleep, { timeout: 20_000 }).toBe(false);
});

/** The pids of the sessions holding the relay's asleep lock (a frozen one keeps it). */
async function asleepHolders(): Promise<number[]> {
  const { rows } = await sql<{ pid: number }>`
    SELECT pid FROM pg_locks
    -- Advisory locks are per database: the other test files' relays hold theirs on the same server.
    WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND classid = ${OUTBOX_LOCK_SPACE} AND objid = ${RELAY_ASLEEP_LOCK}
      AND objsubid = 2 AND granted
  `.execute(bed.handle.db);
  return rows.map((row) => row.pid);
}

const asleep = async () => (await asleepHolders()).length > 0;

/**
 * The relay is blocked in its sleep, not on the way into it: the asleep lock is visible one round
 * trip early (the announce), and an idle relay then claims once more and asks when the next
 * scheduled row is due before it blocks. Those two pool queries come after the announce; a pool
 * frozen before the last of them would hang the probe, not the claim the test is about. So: a pool
 * backend has run the due-time probe since the LISTEN connection's announce, and none is busy.
 */
async function blockedAsleep(): Promise<boolean> {
  const { rows } = await sql<{ blocked: boolean }>`
    WITH relay AS (
      SELECT application_name, state, query, query_start FROM pg_stat_activity
      WHERE datname = current_database() AND application_name IN ('relay', 'relay-listen')
    )
    SELECT EXISTS (
        SELECT 1 FROM relay pool, relay listen
        WHERE listen.application_name = 'relay-listen' AND listen.query LIKE '%pg_advisory_lock_shared%'
          AND pool.application_name = 'relay' AND pool.query LIKE '%min(o.deliver_at) - now()%'
          AND pool.query_start > listen.query_start
      ) AND NOT EXISTS (SELECT 1 FROM relay WHERE application_name = 'relay' AND state <> 'idle')
      AS blocked
  `.execute(bed.handle.db);
  return rows[0]?.blocked === true;
}

describe("the relay with a LISTEN connection that answers nothing", () => {
  it("keeps publishing by polling, and gives the connection up and replaces it with a warning", async () => {
    const { lines, log } = capturingLogger("warn");
    // The pool's config: keepalive, and every query bounded at statement + connect timeout (10 s).
    bed.start({ listenUrl: bed.handle.clientConfig, log });
    await expect.poll(asleep, { timeout: 20_000 }).toBe(true);
    const listen = await freezeBackends(bed.handle.db, { applicationNames: ["relay-listen"] });
    expect(listen.pids.length).toBeGreaterThan(0);

    // The first rows may be claimed on the way into the sleep handshake; after them the relay waits
    // on an unanswered handshake, and no notification can arrive: the wait still ends at the poll
    // interval, long before the query's own timeout (10 s) could end it.
    await enqueueAll(bed.handle, events("orders", 5));
    await expect.poll(() => countRows(bed.handle), { timeout: 5_000 }).toMatchObject({ published: 5 });
    await enqueueAll(bed.handle, events("orders", 5, 0, 5));
    const enqueuedAt = performance.now();
    await expect.poll(() => countRows(bed.handle), { timeout: 5_000 }).toMatchObject({ published: 10 });
    console.info(
      `frozen LISTEN backend: rows published ${Math.round(performance.now() - enqueuedAt)} ms after the insert (poll ${pollIntervalMs} ms)`,
    );

    // At the query's timeout the connection is given up, with a warning, and a new one LISTENs.
    await expect
      .poll(() => lines.find((line) => line.msg === "insert notifications lost; reconnecting"), {
        timeout: 20_000,
      })
      .toMatchObject({ level: "warn", reason: "query_unanswered", err: { message: "Query read timeout" } });
    await expect
      .poll(async () => (await asleepHolders()).some((pid) => !listen.pids.includes(pid)), {
        timeout: 20_000,
      })
      .toBe(true);
    listen.thaw();
  });
});

describe("the relay daemon stopped while Postgres answers nothing", () => {
  const drainTimeoutMs = 2_000;
  const statementTimeoutMs = 1_000;
  const overheadMs = 3_000;
  const stopTimeoutMs = 10_000;
  const start = (extra: Record<string, string> = {}) => {
    const daemon = startDaemonProcess("apps/relay/src/main.ts", {
      DATABASE_URL: bed.url,
      LOG_LEVEL: "info",
      ...awsEnvironment(stack().aws),
      RELAY_TOPIC_ARNS: `orders=${bed.standard.topicArn}`,
      RELAY_DRAIN_TIMEOUT_MS: String(drainTimeoutMs),
      DB_STATEMENT_TIMEOUT_MS: String(statementTimeoutMs),
      // A query's client-side bound (statement + connect timeout, 21 s) far past the whole stop
      // budget: only the drain's own race can keep the stop inside it.
      DB_CONNECT_TIMEOUT_MS: "20000",
      SHUTDOWN_OVERHEAD_MS: String(overheadMs),
      STOP_TIMEOUT_MS: String(stopTimeoutMs),
      AWS_REQUEST_TIMEOUT_MS: "500",
      AWS_MAX_ATTEMPTS: "1",
      ...extra,
    });
    daemons.push(daemon);
    return daemon;
  };

  it("with its LISTEN backend frozen mid-handshake: exits 0 inside the drain budget", async () => {
    const daemon = start({ RELAY_POLL_INTERVAL_MS: String(pollIntervalMs) });
    await daemon.waitForLog("started");
    await expect.poll(asleep, { timeout: 20_000 }).toBe(true);
    const listen = await freezeBackends(bed.handle.db, { applicationNames: ["relay-listen"] });
    expect(listen.pids.length).toBeGreaterThan(0);
    // Within a poll interval the relay sends its sleep handshake, which stays unanswered.
    await expect.poll(() => listen.hasUnreadInput(), { timeout: 10_000 }).toBe(true);

    const stop = await daemon.stop("SIGTERM");
    const drained = daemon.lines.find((line) => line.msg === "drained");
    console.info(`frozen LISTEN backend: drained in ${drained?.drainMs} ms, stopped in ${stop.stopMs} ms`);
    expect(stop.code).toBe(0);
    expect(drained).toMatchObject({ clean: true, published: 0, unsent: 0 });
    expect(Number(drained?.drainMs)).toBeLessThan(drainTimeoutMs);
    expect(stop.stopMs).toBeLessThan(drainTimeoutMs + overheadMs);
  });

  it("with its pool's backends frozen under the claim: exits 0 inside the stop budget, the batch left to its lease", async () => {
    // Notifications wake it (its LISTEN connection works), so the pool is idle until the insert.
    const daemon = start({ RELAY_POLL_INTERVAL_MS: "60000" });
    await daemon.waitForLog("started");
    await expect.poll(blockedAsleep, { timeout: 20_000 }).toBe(true);
    const pool = await freezeBackends(bed.handle.db, { applicationNames: ["relay"], idleOnly: true });
    expect(pool.pids.length).toBeGreaterThan(0);
    await enqueueAll(bed.handle, events("orders", 3));
    // Woken, the relay claims on a frozen connection.
    await expect.poll(() => pool.hasUnreadInput(), { timeout: 10_000 }).toBe(true);

    const stop = await daemon.stop("SIGTERM");
    const drained = daemon.lines.find((line) => line.msg === "drained");
    console.info(`frozen pool backends: drained in ${drained?.drainMs} ms, stopped in ${stop.stopMs} ms`);
    expect(stop.code).toBe(0);
    expect(drained).toMatchObject({ clean: false, published: 0, unsent: -1 });
    // The deadline, then one statement's time for the batch's last marks and releases.
    expect(Number(drained?.drainMs)).toBeLessThan(drainTimeoutMs + overheadMs);
    expect(
      daemon.lines.find((line) => line.msg?.startsWith("drain deadline: the batch's statements")),
    ).toMatchObject({ level: "warn" });
    expect(stop.stopMs).toBeLessThan(stopTimeoutMs);
  });
});
