/**
 * Scenario 6 (the photo service): POST /photos throughput and latency under autocannon, ours (the
 * real apps/api daemon: photo + gear link + outbox event in one statement) beside our photo server
 * writing the photo and its link without the event (the outbox's cost, goal ≤ 15 % fewer requests/s).
 * Both servers run side by side and take the load in turns, one-second slices alternating which goes
 * first, after an unmeasured warm-up: this machine's speed drifts by a fifth over a minute, and
 * whatever it does then falls on both sides alike. Then the stop cost under load: requests that fail
 * because of one SIGTERM (goal 0), beside a server that exits on it.
 */
import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { migrateApiTables } from "@outbox/api";
import { startEquipmentStub } from "@outbox/devstack";
import type { DaemonProcess } from "@outbox/test-kit/process";
import autocannon from "autocannon";
import pg from "pg";
import type { BenchContext } from "../context.js";
import { READY_TIMEOUT_MS, startBenchDaemon } from "../daemons.js";
import { dropDatabase, freshDatabase } from "../fixtures.js";
import { processCpuSeconds, summarize } from "../measure.js";

const OURS = "apps/api/src/main.ts";
const PEER = "bench/src/peers/photo-route-without-outbox.ts";
const PEER_NAME = "same server without the outbox event";
/** No gear: the equipment call is not the outbox's cost, and it would time the stub, not the route. */
const BODY = JSON.stringify({ title: "bench photo", gearIds: [] });
const CONNECTIONS = 16;

interface Server {
  readonly child: ChildProcess;
  readonly port: number;
  /** Its database's name: its pool's connections are the client backends on it. */
  readonly database: string;
}

interface LoadFigures {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly non2xx: number;
  readonly errors: number;
  /** The server process's CPU per request answered, over its slices. */
  readonly nodeCpuUsPerRequest: number;
  /** Its database connections' Postgres CPU per request answered, over its slices. */
  readonly postgresCpuUsPerRequest: number;
}

/** A slice's load and the CPU the server and its connections spent on it. */
interface Slice {
  readonly load: autocannon.Result;
  readonly nodeCpuSeconds: number;
  readonly postgresCpuSeconds: number;
}

const SLICE_SECONDS = 1;

async function load(port: number, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url: `http://127.0.0.1:${port}/photos`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: BODY,
    connections: CONNECTIONS,
    duration: seconds,
  });
}

/** CPU seconds so far of each of `pids`; a process gone since has none (NaN). */
function cpuByPid(pids: readonly number[]): Map<number, number> {
  return new Map(pids.map((pid) => [pid, processCpuSeconds(pid)]));
}

/** CPU seconds each process of `before` spent since; those that ended meanwhile are left out. */
function cpuSince(before: ReadonlyMap<number, number>): number {
  let spent = 0;
  for (const [pid, then] of before) {
    const delta = processCpuSeconds(pid) - then;
    if (Number.isFinite(delta)) spent += delta;
  }
  return spent;
}

/**
 * One slice of load on `server`, with the CPU its process and its database's client backends spent
 * meanwhile. Requests/s drift with whatever else this machine runs; CPU per request much less, so it
 * says what a request costs when the rate cannot. The backends are those open when the slice starts
 * (the pool keeps its connections; one opened during the slice is not counted).
 */
async function measuredSlice(admin: pg.Client, server: Server): Promise<Slice> {
  const { rows } = await admin.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'",
    [server.database],
  );
  const backends = cpuByPid(rows.map((row) => row.pid));
  const node = cpuByPid(server.child.pid === undefined ? [] : [server.child.pid]);
  const result = await load(server.port, SLICE_SECONDS);
  return { load: result, nodeCpuSeconds: cpuSince(node), postgresCpuSeconds: cpuSince(backends) };
}

/** A side's figures over its slices: the rate over all of them, the median slice's percentiles. */
function combine(slices: readonly Slice[]): LoadFigures {
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const total = (pick: (slice: Slice) => number) => slices.reduce((sum, slice) => sum + pick(slice), 0);
  const requests = total((slice) => slice.load.requests.total);
  return {
    requestsPerSecond: requests / total((slice) => slice.load.duration),
    p50Ms: median(slices.map((slice) => slice.load.latency.p50)),
    p99Ms: median(slices.map((slice) => slice.load.latency.p99)),
    non2xx: total((slice) => slice.load.non2xx),
    errors: total((slice) => slice.load.errors),
    nodeCpuUsPerRequest: (total((slice) => slice.nodeCpuSeconds) * 1e6) / requests,
    postgresCpuUsPerRequest: (total((slice) => slice.postgresCpuSeconds) * 1e6) / requests,
  };
}

/**
 * Client loops sending POSTs back to back; at the stop they send nothing new (as a load balancer
 * does once the target deregisters) and the server gets SIGTERM. Requests already sent then must
 * still be answered 201: each one that is not is a request the stop cost.
 */
async function failedPerSigterm(
  server: Server,
  loadMs: number,
): Promise<{ failed: number; inFlight: number }> {
  let signalStop: () => void = () => {};
  const stop = new Promise<"stop">((resolve) => {
    signalStop = () => resolve("stop");
  });
  let failed = 0;
  let inFlight = 0;
  const loop = async () => {
    for (;;) {
      const answered = fetch(`http://127.0.0.1:${server.port}/photos`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: BODY,
      }).then(
        async (response) => {
          await response.arrayBuffer();
          return response.status === 201;
        },
        () => false,
      );
      if ((await Promise.race([answered, stop])) !== "stop") continue;
      // This request was on its way when the SIGTERM went out.
      inFlight += 1;
      if (!(await answered)) failed += 1;
      return;
    }
  };
  const loops = Array.from({ length: CONNECTIONS }, loop);
  await new Promise((resolve) => setTimeout(resolve, loadMs));
  const exited = new Promise((resolve) => server.child.once("exit", resolve));
  signalStop();
  server.child.kill("SIGTERM");
  await Promise.all(loops);
  await exited;
  return { failed, inFlight };
}

type Side = "ours" | "peer";

export async function apiThroughput(ctx: BenchContext): Promise<void> {
  const seconds = ctx.sizes.apiSeconds;
  const stub = await startEquipmentStub();
  const figures: Record<Side, LoadFigures[]> = { ours: [], peer: [] };
  const stops: Record<Side, number[]> = { ours: [], peer: [] };
  try {
    for (let run = 0; run < ctx.runs; run++) {
      const started: { side: Side; url: string; daemon: DaemonProcess }[] = [];
      try {
        const servers = {} as Record<Side, Server>;
        for (const side of ["ours", "peer"] as const) {
          const { url, handle } = await freshDatabase(ctx.stack.postgres.adminUrl, "bench_api");
          await migrateApiTables(handle.db);
          await handle.close(5_000);
          const env = {
            DATABASE_URL: url,
            API_EQUIPMENT_URL: stub.url,
            API_HOST: "127.0.0.1",
            API_PORT: "0",
            OPS_HOST: "127.0.0.1",
            OPS_PORT: "0",
          };
          // BENCH_CPU_PROF=dir: CPU profiles of each server, in dir/api-<side>-<run> (adds overhead: not
          // for the figures).
          const profiles = process.env.BENCH_CPU_PROF;
          const daemon = startBenchDaemon(
            side === "ours" ? OURS : PEER,
            env,
            profiles ? join(profiles, `api-${side}-${run}`) : undefined,
          );
          started.push({ side, url, daemon });
          const listening = await daemon.waitForLog("listening", {}, READY_TIMEOUT_MS);
          servers[side] = {
            child: daemon.child,
            port: Number(listening.port),
            database: new URL(url).pathname.slice(1),
          };
          await load(servers[side].port, ctx.sizes.apiWarmUpSeconds);
        }
        const slices: Record<Side, Slice[]> = { ours: [], peer: [] };
        const admin = new pg.Client({ connectionString: ctx.stack.postgres.adminUrl });
        await admin.connect();
        try {
          for (let slice = 0; slice < seconds / SLICE_SECONDS; slice++) {
            const order = slice % 2 === 0 ? (["peer", "ours"] as const) : (["ours", "peer"] as const);
            for (const side of order) slices[side].push(await measuredSlice(admin, servers[side]));
          }
        } finally {
          await admin.end();
        }
        for (const side of ["ours", "peer"] as const) {
          const figure = combine(slices[side]);
          figures[side].push(figure);
          ctx.log(
            `  api ${side}: ${figure.requestsPerSecond.toFixed(0)} req/s, p50 ${figure.p50Ms} ms, p99 ${figure.p99Ms} ms, CPU µs/request Node ${figure.nodeCpuUsPerRequest.toFixed(0)} + Postgres ${figure.postgresCpuUsPerRequest.toFixed(0)} (non-2xx ${figure.non2xx}, errors ${figure.errors})`,
          );
        }
        for (const side of ["ours", "peer"] as const) {
          const stop = await failedPerSigterm(servers[side], 1_000);
          stops[side].push(stop.failed);
          ctx.log(
            `  api ${side}: SIGTERM under load → ${stop.failed} of ${stop.inFlight} requests in flight failed`,
          );
          ctx.record("api", {
            run,
            side,
            ...figures[side].at(-1),
            stopFailed: stop.failed,
            stopInFlight: stop.inFlight,
          });
        }
      } finally {
        for (const { daemon, url } of started) {
          // A failed run must not leave its server behind.
          if (daemon.child.exitCode === null && daemon.child.signalCode === null)
            daemon.child.kill("SIGKILL");
          await dropDatabase(ctx.stack.postgres.adminUrl, url);
        }
      }
    }
  } finally {
    await stub.close();
  }
  const peer = (summary: ReturnType<typeof summarize>, name = PEER_NAME) => ({ name, summary });
  const metric = (side: Side, pick: (figure: LoadFigures) => number) => summarize(figures[side].map(pick));
  ctx.rows.push(
    {
      scenario: "api",
      metric: "POST /photos requests/s",
      better: "higher",
      ours: metric("ours", (figure) => figure.requestsPerSecond),
      peer: peer(metric("peer", (figure) => figure.requestsPerSecond)),
      note: `autocannon, ${CONNECTIONS} connections, ${seconds} × ${SLICE_SECONDS} s slices each, interleaved; goal ≥ 0.85× (the outbox event costs ≤ 15 %)`,
    },
    {
      scenario: "api",
      metric: "POST /photos p50 ms",
      better: "lower",
      ours: metric("ours", (figure) => figure.p50Ms),
      peer: peer(metric("peer", (figure) => figure.p50Ms)),
    },
    {
      scenario: "api",
      metric: "POST /photos p99 ms",
      better: "lower",
      ours: metric("ours", (figure) => figure.p99Ms),
      peer: peer(metric("peer", (figure) => figure.p99Ms)),
    },
    {
      scenario: "api",
      metric: "POST /photos server CPU µs/request",
      better: "lower",
      ours: metric("ours", (figure) => figure.nodeCpuUsPerRequest),
      peer: peer(metric("peer", (figure) => figure.nodeCpuUsPerRequest)),
      note: "the server process over its slices",
    },
    {
      scenario: "api",
      metric: "POST /photos Postgres CPU µs/request",
      better: "lower",
      ours: metric("ours", (figure) => figure.postgresCpuUsPerRequest),
      peer: peer(metric("peer", (figure) => figure.postgresCpuUsPerRequest)),
      note: "the server's connections (client backends) over its slices; WAL writer and checkpoints not counted",
    },
    {
      scenario: "api",
      metric: "requests failed per SIGTERM under load",
      better: "lower",
      ours: summarize(stops.ours),
      peer: peer(summarize(stops.peer), "a server that exits on SIGTERM"),
      note: `${CONNECTIONS} clients; goal 0`,
    },
  );
}
