/** `runBench`: one embedded stack (wal_level=logical), the chosen scenarios, a report. */
import { readFileSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { type LocalStack, startStack } from "@outbox/devstack";
import pg from "pg";
import { killSpareWorker } from "./child.js";
import type { BenchContext, Row, ScenarioName, Sizes } from "./context.js";
import { machineInfo, parentPid } from "./measure.js";
import { apiThroughput } from "./scenarios/api.js";
import { consumerThroughput } from "./scenarios/consumer.js";
import { enqueueCost } from "./scenarios/enqueue.js";
import { growth } from "./scenarios/growth.js";
import { latency } from "./scenarios/latency.js";
import { relayThroughput } from "./scenarios/relay.js";
import { relayLatencySns } from "./scenarios/relay-latency-sns.js";
import { scale } from "./scenarios/scale.js";
import { stopCost } from "./scenarios/stop.js";

export interface BenchOptions {
  mode: "full" | "quick" | "smoke";
  sizes: Sizes;
  runs: number;
  scenarios: readonly ScenarioName[];
  log?: (message: string) => void;
  /** A running stack (Postgres with wal_level=logical) to use instead of starting one. */
  stack?: LocalStack;
}

export interface BenchReport {
  startedAt: string;
  finishedAt: string;
  mode: BenchOptions["mode"];
  runs: number;
  sizes: Sizes;
  machine: ReturnType<typeof machineInfo> & { loadAverageAfter: number[] };
  versions: Record<string, string>;
  rows: Row[];
  raw: Record<string, unknown[]>;
}

const RUNNERS: Record<ScenarioName, (ctx: BenchContext) => Promise<void>> = {
  relay: relayThroughput,
  "relay-latency-sns": relayLatencySns,
  latency,
  consumer: consumerThroughput,
  stop: stopCost,
  scale,
  api: apiThroughput,
  growth,
  enqueue: enqueueCost,
};

function packageVersion(name: string): string {
  try {
    const path = fileURLToPath(new URL(`../node_modules/${name}/package.json`, import.meta.url));
    return (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const log = options.log ?? ((message: string) => process.stderr.write(`${message}\n`));
  const startedAt = new Date().toISOString();
  const machine = machineInfo();
  log(`machine: ${machine.nproc} cores, ${machine.cpuModel}, load ${machine.loadAverage.join(" ")}`);
  const stack =
    options.stack ?? (await startStack({ backend: "embedded", postgresSettings: { wal_level: "logical" } }));
  try {
    const admin = new pg.Client({ connectionString: stack.postgres.adminUrl });
    await admin.connect();
    const { rows } = await admin.query<{ pid: number; version: string }>(
      "SELECT pg_backend_pid() AS pid, current_setting('server_version') AS version",
    );
    const postmasterPid = parentPid(rows[0]?.pid ?? 0);
    await admin.end();
    const versions: Record<string, string> = {
      node: process.version,
      postgres: rows[0]?.version ?? "unknown",
      "@outbox/relay": packageVersion("@outbox/relay"),
      "@outbox/consumer": packageVersion("@outbox/consumer"),
      "pg-transactional-outbox": packageVersion("pg-transactional-outbox"),
      "sqs-consumer": packageVersion("sqs-consumer"),
      fastify: packageVersion("fastify"),
      autocannon: packageVersion("autocannon"),
      pg: packageVersion("pg"),
      kysely: packageVersion("kysely"),
      "@aws-sdk/client-sns": packageVersion("@aws-sdk/client-sns"),
      "@aws-sdk/client-sqs": packageVersion("@aws-sdk/client-sqs"),
      "@outbox/devstack": packageVersion("@outbox/devstack"),
    };
    log(
      `versions: ${Object.entries(versions)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}`,
    );
    const ctx: BenchContext = {
      stack,
      postmasterPid,
      sizes: options.sizes,
      runs: options.runs,
      log,
      rows: [],
      raw: {},
      record(scenario, figures) {
        const list = ctx.raw[scenario] ?? [];
        list.push(figures);
        ctx.raw[scenario] = list;
      },
    };
    for (const name of options.scenarios) {
      const t0 = Date.now();
      await RUNNERS[name](ctx);
      log(`  (${name}: ${((Date.now() - t0) / 1_000).toFixed(0)} s)`);
    }
    return {
      startedAt,
      finishedAt: new Date().toISOString(),
      mode: options.mode,
      runs: options.runs,
      sizes: options.sizes,
      machine: { ...machine, loadAverageAfter: os.loadavg().map((l) => Number(l.toFixed(2))) },
      versions,
      rows: ctx.rows,
      raw: ctx.raw,
    };
  } finally {
    killSpareWorker();
    if (!options.stack) await stack.stop();
  }
}
