/**
 * Relay throughput and latency, printed as figures (not a test).
 *
 *   pnpm exec tsx --conditions=development apps/relay/bench/relay-throughput.ts
 *
 * The parent starts an embedded stack (Postgres, SQS, the SNS emulator) and prepares each database;
 * every measurement runs the relay in a child process of its own, so `process.cpuUsage()` is the
 * relay's CPU and not the emulator's or Postgres's.
 *
 * BENCH_PUBLISHERS=null (skip the local SNS), BENCH_BATCH_SIZES=100,500,1000, BENCH_RUNS=1 (repeats of
 * each throughput run), BENCH_LATENCY=0 (skip the latency run), BENCH_CPU_PROF=dir (`--cpu-prof` of
 * each child), BENCH_EVENTS=50000, BENCH_SETUP_SQL (run after the migrations: schema experiments).
 */
import { spawn } from "node:child_process";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { bootstrapResources, snsClient, startStack } from "@outbox/devstack";
import { createDatabase, type DatabaseHandle, enqueue, migrateToLatest, type NewEvent } from "@outbox/shared";
import { sql } from "kysely";
import pg from "pg";
import { benchEvent } from "../../../bench/src/fixtures.js";
import { parentPid, percentile, postgresCpuSeconds, wallMs } from "../../../bench/src/measure.js";
import { createRelay, createSnsPublisher, nullPublisher, type Publisher } from "../src/index.js";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 50_000);
const BATCH_SIZES = (process.env.BENCH_BATCH_SIZES ?? "100,500,1000").split(",").map(Number);
/** Throughput runs per publisher and batch size (the machine may be shared: repeat, compare medians). */
const RUNS = Number(process.env.BENCH_RUNS ?? 1);
/** `BENCH_LATENCY=0` skips the latency runs. */
const LATENCY = process.env.BENCH_LATENCY !== "0";
const LATENCY_RATE = 500;
const LATENCY_SECONDS = 10;
/** `BENCH_PUBLISHERS=null` skips the runs through the local SNS stack. */
const PUBLISHERS = (process.env.BENCH_PUBLISHERS ?? "null,sns").split(",") as ("null" | "sns")[];

interface Job {
  readonly mode: "throughput" | "latency";
  readonly publisher: "null" | "sns";
  readonly url: string;
  readonly batchSize: number;
  readonly topicArn: string;
  readonly aws: Parameters<typeof snsClient>[0];
}

interface Figures {
  readonly events: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
  readonly latenciesMs?: number[];
}

const event: (n: number) => NewEvent = benchEvent;
const now = wallMs;

// ---- child: one relay, measured ----

async function runJob(job: Job): Promise<Figures> {
  const handle = createDatabase({
    url: job.url,
    service: "bench",
    poolMax: 20,
    statementTimeoutMs: 30_000,
    idleInTransactionTimeoutMs: 30_000,
  });
  const sns = snsClient(job.aws, { maxAttempts: 3 });
  const inner: Publisher = job.publisher === "null" ? nullPublisher : createSnsPublisher(sns);
  const publishedAt = new Map<string, number>();
  const publisher: Publisher =
    job.mode === "latency"
      ? {
          async publishBatch(request, signal) {
            const result = await inner.publishBatch(request, signal);
            const at = now();
            for (const entry of request.entries) publishedAt.set(entry.id, at);
            return result;
          },
        }
      : inner;
  const target = job.mode === "latency" ? LATENCY_RATE * LATENCY_SECONDS : EVENTS;
  let published = 0;
  let resolveDone: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const relay = createRelay({
    db: handle.db,
    publisher,
    listenUrl: job.mode === "latency" ? job.url : null,
    topicArns: { bench: job.topicArn },
    batchSize: job.batchSize,
    publishConcurrency: 16,
    pollIntervalMs: 1_000,
  });
  relay.on("batch", (report) => {
    published += report.published;
    if (published >= target) resolveDone();
  });
  const committedAt = new Map<string, number>();
  if (job.mode === "latency") {
    // One event per transaction, paced: each commit NOTIFYs an idle relay.
    const producer = createDatabase({
      url: job.url,
      service: "bench-producer",
      poolMax: 2,
      statementTimeoutMs: 30_000,
      idleInTransactionTimeoutMs: 30_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const interval = 1_000 / LATENCY_RATE;
    const t0 = performance.now();
    for (let n = 0; n < target; n += 1) {
      const wait = t0 + n * interval - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const [id] = await enqueue(producer.db, [event(n)]);
      committedAt.set(id ?? "", now());
    }
    await done;
    await producer.close(5_000);
  } else {
    await done;
  }
  const seconds = (performance.now() - started) / 1_000;
  const cpu = process.cpuUsage(cpuBefore);
  await relay.drain();
  sns.destroy();
  await handle.close(5_000);
  const latenciesMs =
    job.mode === "latency"
      ? [...committedAt].map(([id, at]) => (publishedAt.get(id) ?? Number.NaN) - at).filter(Number.isFinite)
      : undefined;
  return { events: published, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, latenciesMs };
}

// ---- parent: stack, data, report ----

function inChild(job: Job): Promise<Figures> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        ...(process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
        "--import",
        "tsx",
        "--conditions=development",
        fileURLToPath(import.meta.url),
      ],
      {
        env: { ...process.env, BENCH_JOB: JSON.stringify(job) },
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("exit", (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split("\n").pop() ?? "{}") as Figures)
        : reject(new Error(`job exited ${code}`)),
    );
  });
}

async function freshDatabase(
  adminUrl: string,
  name: string,
): Promise<{ url: string; handle: DatabaseHandle }> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const handle = createDatabase({
    url: url.toString(),
    service: "bench-setup",
    poolMax: 4,
    statementTimeoutMs: 120_000,
    idleInTransactionTimeoutMs: 120_000,
  });
  await migrateToLatest(handle.db);
  // Schema experiments: e.g. BENCH_SETUP_SQL="ALTER TABLE outbox SET (fillfactor = 100)".
  if (process.env.BENCH_SETUP_SQL) await sql.raw(process.env.BENCH_SETUP_SQL).execute(handle.db);
  return { url: url.toString(), handle };
}

async function backlog(handle: DatabaseHandle, count: number): Promise<void> {
  for (let at = 0; at < count; at += 1_000) {
    await enqueue(
      handle.db,
      Array.from({ length: Math.min(1_000, count - at) }, (_, i) => event(at + i)),
    );
  }
  await sql`VACUUM ANALYZE outbox`.execute(handle.db);
}

async function main(): Promise<void> {
  const stack = await startStack({ backend: "embedded" });
  try {
    const { topicArn } = await bootstrapResources(stack.aws, { name: "bench", rawDelivery: true });
    const admin = new pg.Client({ connectionString: stack.postgres.adminUrl });
    await admin.connect();
    const postmasterPid = parentPid(
      (await admin.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid ?? 0,
    );
    await admin.end();
    const load = () => (os.loadavg()[0] ?? 0).toFixed(2);
    let n = 0;
    for (const publisher of PUBLISHERS) {
      for (const batchSize of BATCH_SIZES.flatMap((size) => Array<number>(RUNS).fill(size))) {
        n += 1;
        const { url, handle } = await freshDatabase(stack.postgres.adminUrl, `bench_${n}`);
        await backlog(handle, EVENTS);
        await handle.close(5_000);
        const loadBefore = load();
        const pgBefore = postgresCpuSeconds(postmasterPid);
        const figures = await inChild({
          mode: "throughput",
          publisher,
          url,
          batchSize,
          topicArn,
          aws: stack.aws,
        });
        const pgCpu = postgresCpuSeconds(postmasterPid) - pgBefore;
        const perEvent = (cpuSeconds: number) => ((cpuSeconds / figures.events) * 1e6).toFixed(1);
        console.log(
          `throughput  publisher=${publisher.padEnd(4)} batch=${String(batchSize).padStart(4)}  ${figures.events} events in ${figures.seconds.toFixed(2)} s = ${Math.round(figures.events / figures.seconds)} events/s, relay CPU ${figures.cpuSeconds.toFixed(2)} s (${((figures.cpuSeconds / figures.seconds) * 100).toFixed(0)}% of a core, ${perEvent(figures.cpuSeconds)} µs/event), Postgres CPU ${perEvent(pgCpu)} µs/event (whole server, incl. the child's start), load ${loadBefore} → ${load()}`,
        );
      }
    }
    for (const publisher of LATENCY ? PUBLISHERS : []) {
      n += 1;
      const { url, handle } = await freshDatabase(stack.postgres.adminUrl, `bench_${n}`);
      await handle.close(5_000);
      const figures = await inChild({
        mode: "latency",
        publisher,
        url,
        batchSize: 100,
        topicArn,
        aws: stack.aws,
      });
      const sorted = [...(figures.latenciesMs ?? [])].sort((a, b) => a - b);
      console.log(
        `latency     publisher=${publisher.padEnd(4)} ${LATENCY_RATE} events/s, NOTIFY-woken: commit → publish p50 ${percentile(sorted, 50).toFixed(2)} ms, p99 ${percentile(sorted, 99).toFixed(2)} ms, max ${percentile(sorted, 100).toFixed(2)} ms (${sorted.length} events, relay CPU ${figures.cpuSeconds.toFixed(2)} s over ${figures.seconds.toFixed(1)} s)`,
      );
    }
  } finally {
    await stack.stop();
  }
}

const job = process.env.BENCH_JOB;
if (job) {
  const figures = await runJob(JSON.parse(job) as Job);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  process.exit(0);
} else {
  await main();
}
