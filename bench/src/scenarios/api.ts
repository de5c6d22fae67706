/**
 * Scenario 6 (the photo service): POST /photos throughput and latency under autocannon, ours (the
 * real apps/api daemon: photo + gear link + outbox event in one statement) beside our photo server
 * writing the photo and its link without the event (the outbox's cost, goal ≤ 15 % fewer requests/s);
 * each measured after an unmeasured warm-up, the side going first alternating between runs. Then the
 * stop cost under load: requests that fail because of one SIGTERM (goal 0), beside a server that
 * exits on it.
 */
import type { ChildProcess } from "node:child_process";
import { startEquipmentStub } from "@outbox/devstack";
import autocannon from "autocannon";
import type { BenchContext } from "../context.js";
import { spawnDaemon } from "../daemon-process.js";
import { dropDatabase, freshDatabase } from "../fixtures.js";
import { summarize } from "../measure.js";

const OURS = "apps/api/src/main.ts";
const PEER = "bench/src/peers/photo-route-without-outbox.ts";
const PEER_NAME = "same server without the outbox event";
/** No gear: the equipment call is not the outbox's cost, and it would time the stub, not the route. */
const BODY = JSON.stringify({ title: "bench photo", gearIds: [] });
const CONNECTIONS = 16;

interface Server {
  readonly child: ChildProcess;
  readonly port: number;
}

interface LoadFigures {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly non2xx: number;
  readonly errors: number;
}

async function load(port: number, seconds: number): Promise<LoadFigures> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/photos`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: BODY,
    connections: CONNECTIONS,
    duration: seconds,
  });
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
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

export async function apiThroughput(ctx: BenchContext): Promise<void> {
  const seconds = ctx.sizes.apiSeconds;
  const stub = await startEquipmentStub();
  const figures: Record<"ours" | "peer", LoadFigures[]> = { ours: [], peer: [] };
  const stops: Record<"ours" | "peer", number[]> = { ours: [], peer: [] };
  try {
    for (let run = 0; run < ctx.runs; run++) {
      // Alternating which side goes first: whatever the previous side left the database server doing
      // (a checkpoint, autovacuum) must not always land on the same side.
      const order = run % 2 === 0 ? (["peer", "ours"] as const) : (["ours", "peer"] as const);
      for (const side of order) {
        const { url, handle } = await freshDatabase(ctx.stack.postgres.adminUrl, "bench_api");
        await handle.close(5_000);
        const env = { DATABASE_URL: url, EQUIPMENT_URL: stub.url, API_HOST: "127.0.0.1", API_PORT: "0" };
        const daemon = spawnDaemon(side === "ours" ? OURS : PEER, env, "listening");
        try {
          const server: Server = { child: daemon.child, port: Number((await daemon.ready).port) };
          await load(server.port, ctx.sizes.apiWarmUpSeconds);
          const figure = await load(server.port, seconds);
          figures[side].push(figure);
          ctx.log(
            `  api ${side}: ${figure.requestsPerSecond.toFixed(0)} req/s, p50 ${figure.p50Ms} ms, p99 ${figure.p99Ms} ms (non-2xx ${figure.non2xx}, errors ${figure.errors})`,
          );
          const stop = await failedPerSigterm(server, 1_000);
          stops[side].push(stop.failed);
          ctx.log(
            `  api ${side}: SIGTERM under load → ${stop.failed} of ${stop.inFlight} requests in flight failed`,
          );
          ctx.record("api", { run, side, ...figure, stopFailed: stop.failed, stopInFlight: stop.inFlight });
        } finally {
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
  const metric = (side: "ours" | "peer", pick: (figure: LoadFigures) => number) =>
    summarize(figures[side].map(pick));
  ctx.rows.push(
    {
      scenario: "api",
      metric: "POST /photos requests/s",
      better: "higher",
      ours: metric("ours", (figure) => figure.requestsPerSecond),
      peer: peer(metric("peer", (figure) => figure.requestsPerSecond)),
      note: `autocannon, ${CONNECTIONS} connections, ${seconds} s; goal ≥ 0.85× (the outbox event costs ≤ 15 %)`,
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
      metric: "requests failed per SIGTERM under load",
      better: "lower",
      ours: summarize(stops.ours),
      peer: peer(summarize(stops.peer), "a server that exits on SIGTERM"),
      note: `${CONNECTIONS} clients; goal 0`,
    },
  );
}
