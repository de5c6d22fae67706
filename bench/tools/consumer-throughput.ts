import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { migrateToLatest } from "@outbox/client";
import { consumerSettings, createConsumer } from "@outbox/consumer";
import { bootstrapResources } from "@outbox/devstack";
// The example handlers' one-row effect is what each message costs here; they are not part of the
// consumer's public API.
import exampleHandlers from "@outbox/example-handlers";
import { EXAMPLE_HANDLERS_MODULE } from "@outbox/example-handlers/modules";
import {
  createDatabase,
  createLogger,
  createLongPollSqsClient,
  createSqsClient,
  migrateExampleTables,
  settingDefault,
} from "@outbox/shared";
import { repoPath, startDaemonProcess } from "@outbox/test-kit/process";
import { fillQueue } from "../src/fixtures.js";
import { machineJiffies, processCpuSeconds } from "../src/measure.js";

// Consumer throughput through the local stack: inbox transaction + the example's one-row effect.
// The stack (Postgres, SQS, SNS) runs in a child process, so process.cpuUsage() here is the
// consumer's own CPU. The queue is filled before each measurement starts.
// Run: pnpm exec tsx --conditions=development bench/tools/consumer-throughput.ts
// BENCH_CASES=8x50,4x10 picks cases, BENCH_REPEAT=n repeats each, BENCH_SKIP_STOP=1 skips the stop
// runs, BENCH_CPU_PROF=dir writes a CPU profile per case (summarise with bench/tools/profile-summary.ts).

const children: ChildProcess[] = [];

interface StackEnv {
  databaseUrl: string;
  sqsEndpoint: string;
  snsEndpoint: string;
  region: string;
}

const childCpuSeconds = (child: ChildProcess | undefined): number => processCpuSeconds(child?.pid);

async function startStackProcess(): Promise<StackEnv> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "--conditions=development", repoPath("drills/src/cli/stack.ts")],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.push(child);
  const env: Record<string, string> = {};
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    let pending = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) {
        const match = /^export (\w+)=(.*)$/.exec(line);
        if (match?.[1] && match[2] !== undefined) env[match[1]] = match[2];
      }
      if (env.CONSUMER_DLQ_URL) resolve();
    });
    child.once("exit", (code) => reject(new Error(`stack exited with ${code}: ${stderr}`)));
  });
  for (const name of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]) process.env[name] = env[name];
  return {
    databaseUrl: env.DATABASE_URL ?? "",
    sqsEndpoint: env.AWS_ENDPOINT_URL_SQS ?? "",
    snsEndpoint: env.AWS_ENDPOINT_URL_SNS ?? "",
    region: env.AWS_REGION ?? "",
  };
}

async function createDatabaseFor(adminUrl: string): Promise<string> {
  const name = `bench_consumer_${randomBytes(4).toString("hex")}`;
  const admin = createDatabase({
    url: adminUrl,
    service: "bench",
    poolMax: 1,
    statementTimeoutMs: 60_000,
    idleInTransactionTimeoutMs: 60_000,
  });
  await admin.pool.query(`CREATE DATABASE ${name}`);
  await admin.close(5_000);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

const fill = (sqs: SQSClient, queueUrl: string, total: number) => fillQueue(sqs, queueUrl, total);

// Whatever happens, the stack and daemon processes started here stop with us.
process.on("exit", () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
});
const stack = await startStackProcess();
const databaseUrl = await createDatabaseFor(stack.databaseUrl);
const aws = {
  region: stack.region,
  endpoint: stack.sqsEndpoint,
  connectionTimeoutMs: 3_000,
  requestTimeoutMs: 5_000,
  maxAttempts: 3,
};
const setupSqs = createSqsClient({ ...aws, maxSockets: 32 });
const log = createLogger({ service: "bench", version: "0", level: "warn" });
const migrator = createDatabase({
  url: databaseUrl,
  service: "bench",
  statementTimeoutMs: 60_000,
  idleInTransactionTimeoutMs: 60_000,
});
await migrateToLatest(migrator.db);
await migrateExampleTables(migrator.db);
await migrator.close(5_000);
const awsEndpoints = {
  region: stack.region,
  snsEndpoint: stack.snsEndpoint,
  sqsEndpoint: stack.sqsEndpoint,
  credentials: {
    accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? "",
    secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? "",
  },
};

// One pool for every case: pools closed and reopened between cases can briefly exceed the server's
// max_connections while old backends are still exiting.
const database = createDatabase({
  url: databaseUrl,
  service: "bench-consumer",
  poolMax: 52,
  statementTimeoutMs: 5_000,
  idleInTransactionTimeoutMs: 10_000,
});

interface Row {
  pollers: number;
  concurrency: number;
  messages: number;
  seconds: number;
  perSecond: number;
  cpuMicrosPerMessage: number;
  /** The stack process's CPU use over the run (100 = one core busy). */
  stackCpuPercent: number;
  /** All cores of the machine together (consumer + stack + Postgres + the rest). */
  machineBusyPercent: number;
  /** Messages per ReceiveMessage / DeleteMessageBatch call (10 at best). */
  perReceive: number;
  perDelete: number;
}

async function measure(pollers: number, concurrency: number, messages: number): Promise<Row> {
  const queue = await bootstrapResources(awsEndpoints, {
    name: `bench-${pollers}-${concurrency}-${randomBytes(3).toString("hex")}`,
    rawDelivery: true,
  });
  await fill(setupSqs, queue.queueUrl, messages);
  const sqs = createSqsClient({ ...aws, maxSockets: 16 });
  // The long polls' own client, as the daemon has it (ConsumerOptions.receiveSqs), at its default wait.
  const receiveSqs = createLongPollSqsClient(
    { ...aws, maxSockets: pollers },
    settingDefault(consumerSettings.waitTimeSeconds),
  );
  // SQS calls by command during the run: receives and delete batches per message show batch use.
  const calls: Record<string, number> = {};
  for (const client of [sqs, receiveSqs]) {
    client.middlewareStack.add(
      (next, context) => (args) => {
        const command = context.commandName ?? "unknown";
        calls[command] = (calls[command] ?? 0) + 1;
        return next(args);
      },
      { step: "initialize", name: "benchCallCounter" },
    );
  }
  const consumer = createConsumer({
    handlers: exampleHandlers,
    pool: database.pool,
    sqs,
    receiveSqs,
    queueUrl: queue.queueUrl,
    name: `bench-${pollers}-${concurrency}`,
    log,
    pollers,
    concurrency,
  });
  // Warm the connections so the figures are the steady state.
  await Promise.all(Array.from({ length: concurrency }, () => database.pool.query("SELECT 1")));
  // BENCH_CPU_PROF=dir: a CPU profile of the measured window (adds overhead: not for the figures).
  const profiling = process.env.BENCH_CPU_PROF ? new Session() : undefined;
  if (profiling) {
    profiling.connect();
    await profiling.post("Profiler.enable");
    await profiling.post("Profiler.setSamplingInterval", { interval: 200 });
    await profiling.post("Profiler.start");
  }
  const stackCpuBefore = childCpuSeconds(children[0]);
  const machineBefore = machineJiffies();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  consumer.start();
  while (consumer.stats().processed < messages) await new Promise((resolve) => setTimeout(resolve, 5));
  const seconds = (performance.now() - started) / 1_000;
  const cpu = process.cpuUsage(cpuBefore);
  const callsDuringRun = { ...calls };
  const stackCpu = childCpuSeconds(children[0]) - stackCpuBefore;
  const machineAfter = machineJiffies();
  if (profiling) {
    const { profile } = await profiling.post("Profiler.stop");
    const file = `${process.env.BENCH_CPU_PROF}/consumer-${pollers}x${concurrency}-${Date.now()}.cpuprofile`;
    writeFileSync(file, JSON.stringify(profile));
    profiling.disconnect();
  }
  await consumer.drain();
  sqs.destroy();
  receiveSqs.destroy();
  return {
    pollers,
    concurrency,
    messages,
    seconds: Number(seconds.toFixed(2)),
    perSecond: Math.round(messages / seconds),
    cpuMicrosPerMessage: Math.round((cpu.user + cpu.system) / messages),
    stackCpuPercent: Math.round((stackCpu / seconds) * 100),
    machineBusyPercent: Math.round(
      ((machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)) * 100,
    ),
    perReceive: Number((messages / (callsDuringRun.ReceiveMessageCommand ?? 1)).toFixed(1)),
    perDelete: Number((messages / (callsDuringRun.DeleteMessageBatchCommand ?? 1)).toFixed(1)),
  };
}

async function stopLatency(idle: boolean): Promise<Record<string, unknown>> {
  const queue = await bootstrapResources(awsEndpoints, {
    name: `bench-stop-${randomBytes(3).toString("hex")}`,
    rawDelivery: true,
  });
  if (!idle) await fill(setupSqs, queue.queueUrl, 20_000);
  const daemon = startDaemonProcess(
    "apps/consumer/src/main.ts",
    {
      DATABASE_URL: databaseUrl,
      AWS_REGION: stack.region,
      AWS_ENDPOINT_URL_SQS: stack.sqsEndpoint,
      CONSUMER_QUEUE_URL: queue.queueUrl,
      CONSUMER_HANDLERS_MODULE: EXAMPLE_HANDLERS_MODULE,
      CONSUMER_NAME: `bench-stop-${idle ? "idle" : "load"}`,
      CONSUMER_POLLERS: "4",
      CONSUMER_CONCURRENCY: "50",
      DB_POOL_MAX: "60",
    },
    { stderr: "inherit" },
  );
  children.push(daemon.child);
  await daemon.waitForLog("started", {}, 120_000);
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const { code, stopMs } = await daemon.stop("SIGTERM");
  const drained = daemon.lines.find((line) => line.msg === "drained") ?? {};
  return {
    scenario: idle ? "idle queue (a 10 s long poll open)" : "under load (20 000 queued)",
    stopMs,
    exitCode: code,
    drainMs: drained.drainMs,
    clean: drained.clean,
    processed: drained.processed,
    released: drained.released,
  };
}

/** Sequential one-row commits: the WAL flush latency that bounds a low-concurrency consumer. */
async function commitLatencyMs(): Promise<number> {
  const probe = createDatabase({
    url: databaseUrl,
    service: "bench",
    poolMax: 1,
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 5_000,
  });
  const client = await probe.pool.connect();
  const started = performance.now();
  const rounds = 200;
  for (let round = 0; round < rounds; round += 1) {
    await client.query("BEGIN");
    await client.query("INSERT INTO inbox (consumer, event_id, message_id) VALUES ('probe', $1, 'probe')", [
      randomUUID(),
    ]);
    await client.query("COMMIT");
  }
  client.release();
  await probe.close(5_000);
  return Number(((performance.now() - started) / rounds).toFixed(2));
}

try {
  console.log(JSON.stringify({ sequentialCommitMs: await commitLatencyMs() }));
  const rows: Row[] = [];
  // BENCH_CASES=8x50,4x10 runs only those pollers×concurrency pairs.
  const only = process.env.BENCH_CASES?.split(",");
  for (const pollers of [1, 4, 8]) {
    for (const concurrency of [1, 10, 50]) {
      if (only && !only.includes(`${pollers}x${concurrency}`)) continue;
      const messages = concurrency === 1 ? 2_000 : pollers === 1 ? 4_000 : 10_000;
      // BENCH_REPEAT=3 measures each case three times (the machine may be shared: compare medians).
      for (let run = 0; run < Number(process.env.BENCH_REPEAT ?? 1); run += 1) {
        const row = await measure(pollers, concurrency, messages);
        rows.push(row);
        console.log(JSON.stringify({ ...row, load: loadavg()[0]?.toFixed(2) }));
      }
    }
  }
  console.table(rows);
  await database.close(5_000); // before the daemon runs below open their own pools
  if (!process.env.BENCH_SKIP_STOP) console.table([await stopLatency(false), await stopLatency(true)]);
} finally {
  setupSqs.destroy();
  await database.close(5_000);
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
}
