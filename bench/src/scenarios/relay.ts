/** Scenarios 1 (relay throughput) and 2 (commit → publish latency): our relay vs pg-transactional-outbox. */
import { randomUUID } from "node:crypto";
import { bootstrapResources } from "@outbox/devstack";
import { createDatabase, enqueue } from "@outbox/shared";
import {
  BODY,
  benchEvent,
  createEmptyDatabase,
  dropDatabase,
  freshDatabase,
  KEYS,
  ourBacklog,
  percentile,
  postgresCpuSeconds,
  produceAtRate,
  summarize,
  TRACEPARENT,
  wallMs,
} from "@outbox/test-kit/bench";
import pg from "pg";
import { getDisabledLogger, initializeMessageStorage } from "pg-transactional-outbox";
import { runJob } from "../child.js";
import type { BenchContext, Row } from "../context.js";
import type { RelayImpl, RelayJob, Sink } from "../jobs.js";
import { PTO_TABLE, ptoBacklog, ptoSetup } from "../pto-fixtures.js";

const PTO_LATENCY_POLL_MS = 250; // its README example's nextMessagesPollingIntervalInMs
const POOL_MAX = 20;

export interface RelayRun {
  impl: RelayImpl;
  sink: Sink;
  batchSize: number;
  events: number;
  seconds: number;
  eventsPerSecond: number;
  cpuSeconds: number;
  cpuMicrosPerEvent: number;
  maxRssMiB: number;
  postgresCpuSeconds: number;
  capped: boolean;
}

async function topic(ctx: BenchContext, label: string): Promise<string> {
  const { topicArn } = await bootstrapResources(ctx.stack.aws, {
    name: `bench-${label}-${randomUUID().slice(0, 8)}`,
    rawDelivery: true,
  });
  return topicArn;
}

/** A database holding `events` unsent events in the subject's own outbox. */
export async function prepared(ctx: BenchContext, impl: RelayImpl, events: number) {
  if (impl === "ours") {
    const { url, handle } = await freshDatabase(ctx.stack.postgres.adminUrl);
    await ourBacklog(handle, events);
    await handle.close(5_000);
    return { url, pto: undefined };
  }
  const url = await createEmptyDatabase(ctx.stack.postgres.adminUrl, "bench_pto");
  const pto = await ptoSetup(url, impl === "pto-replication");
  await ptoBacklog(url, events);
  return { url, pto };
}

export async function relayThroughputRun(
  ctx: BenchContext,
  impl: RelayImpl,
  sink: Sink,
  batchSize: number,
  events = ctx.sizes.relayEvents,
): Promise<RelayRun> {
  const { url, pto } = await prepared(ctx, impl, events);
  const topicArn = await topic(ctx, "relay");
  try {
    const job: RelayJob = {
      kind: "relay",
      impl,
      sink,
      url,
      aws: ctx.stack.aws,
      topicArn,
      batchSize,
      expected: events,
      capMs: impl === "ours" ? 300_000 : ctx.sizes.relayCapMs,
      listen: impl === "ours",
      recordTimes: false,
      pollIntervalMs: impl === "ours" ? 1_000 : 500,
      poolMax: POOL_MAX,
      pto,
    };
    const pgBefore = postgresCpuSeconds(ctx.postmasterPid);
    const result = await runJob(job);
    const run: RelayRun = {
      impl,
      sink,
      batchSize,
      events: result.count,
      seconds: result.seconds,
      eventsPerSecond: Math.round(result.count / result.seconds),
      cpuSeconds: result.cpuSeconds,
      cpuMicrosPerEvent: Math.round((result.cpuSeconds / Math.max(1, result.count)) * 1e6),
      maxRssMiB: result.maxRssMiB,
      postgresCpuSeconds: Number((postgresCpuSeconds(ctx.postmasterPid) - pgBefore).toFixed(2)),
      capped: result.capped === true,
    };
    ctx.record("relay-throughput", { ...run });
    ctx.log(
      `  relay ${impl.padEnd(15)} sink=${sink.padEnd(4)} batch=${String(batchSize).padStart(4)}: ${run.events} events in ${run.seconds.toFixed(2)} s = ${run.eventsPerSecond} events/s, CPU ${run.cpuSeconds.toFixed(2)} s (${run.cpuMicrosPerEvent} µs/event), Postgres CPU ${run.postgresCpuSeconds} s, RSS ${run.maxRssMiB} MiB${run.capped ? " (capped)" : ""}`,
    );
    return run;
  } finally {
    await dropDatabase(ctx.stack.postgres.adminUrl, url);
  }
}

function rowsFor(
  scenario: string,
  ours: RelayRun[],
  peerName: string,
  peer: RelayRun[],
  note?: string,
): Row[] {
  const pick = (runs: RelayRun[], key: keyof RelayRun) => summarize(runs.map((r) => Number(r[key])));
  return [
    {
      scenario,
      metric: "events/s",
      better: "higher",
      ours: pick(ours, "eventsPerSecond"),
      peer: { name: peerName, summary: pick(peer, "eventsPerSecond") },
      ...(note ? { note } : {}),
    },
    {
      scenario,
      metric: "relay CPU µs/event",
      better: "lower",
      ours: pick(ours, "cpuMicrosPerEvent"),
      peer: { name: peerName, summary: pick(peer, "cpuMicrosPerEvent") },
    },
    {
      scenario,
      metric: "Postgres CPU s (whole run)",
      better: "lower",
      ours: pick(ours, "postgresCpuSeconds"),
      peer: { name: peerName, summary: pick(peer, "postgresCpuSeconds") },
    },
    {
      scenario,
      metric: "relay peak RSS MiB",
      better: "lower",
      ours: pick(ours, "maxRssMiB"),
      peer: { name: peerName, summary: pick(peer, "maxRssMiB") },
    },
  ];
}

export async function relayThroughput(ctx: BenchContext): Promise<void> {
  const { sizes, runs } = ctx;
  ctx.log(
    `relay throughput: ${sizes.relayEvents} events backlog → drained; peers capped at ${sizes.relayCapMs} ms`,
  );
  // pg-transactional-outbox's polling listener at its best batch size (one run each, null sink).
  let best = { batchSize: sizes.ptoBatchSizes[0] ?? 50, rate: -1 };
  if (sizes.ptoBatchSizes.length > 1) {
    ctx.log("  tuning pg-transactional-outbox polling batch size");
    for (const batchSize of sizes.ptoBatchSizes) {
      const run = await relayThroughputRun(ctx, "pto-polling", "null", batchSize);
      if (run.eventsPerSecond > best.rate) best = { batchSize, rate: run.eventsPerSecond };
    }
  }
  ctx.record("relay-tuning", { ptoPollingBestBatchSize: best.batchSize });
  for (const sink of ["null", "sns"] as const) {
    const ours: RelayRun[] = [];
    const polling: RelayRun[] = [];
    const replication: RelayRun[] = [];
    for (let run = 0; run < runs; run += 1) {
      ours.push(await relayThroughputRun(ctx, "ours", sink, sizes.ourBatchSize));
      polling.push(await relayThroughputRun(ctx, "pto-polling", sink, best.batchSize));
      replication.push(await relayThroughputRun(ctx, "pto-replication", sink, 0));
    }
    const scenario = `1${sink === "null" ? "a" : "b"} relay, ${sink === "null" ? "null sink (DB-bound)" : "local SNS"}`;
    const capped = [...polling, ...replication].some((r) => r.capped)
      ? `peer runs stopped at ${sizes.relayCapMs / 1_000} s, rate so far`
      : undefined;
    ctx.rows.push(
      ...rowsFor(scenario, ours, `pto polling (batch ${best.batchSize}, parallel)`, polling, capped),
      ...rowsFor(scenario, ours, "pto replication (full concurrency)", replication, capped),
    );
  }
}

// ---- latency ----

export interface LatencyRun {
  impl: RelayImpl;
  rate: number;
  events: number;
  p50: number;
  p99: number;
  max: number;
  negative: number;
  cpuSeconds: number;
  maxRssMiB: number;
}

async function latencyRun(ctx: BenchContext, impl: RelayImpl, rate: number): Promise<LatencyRun> {
  const total = Math.max(1, Math.round(rate * ctx.sizes.latencySeconds));
  const { url, pto } = await prepared(ctx, impl, 0);
  const topicArn = await topic(ctx, "latency");
  const producer = new pg.Pool({ connectionString: url, max: 8 });
  const ours =
    impl === "ours"
      ? createDatabase({
          url,
          service: "bench-producer",
          poolMax: 8,
          statementTimeoutMs: 30_000,
          idleInTransactionTimeoutMs: 30_000,
        })
      : undefined;
  try {
    const committedAt = new Map<string, number>();
    const store = initializeMessageStorage(
      {
        outboxOrInbox: "outbox",
        settings: {
          dbSchema: "public",
          dbTable: PTO_TABLE,
          enableMaxAttemptsProtection: false,
          enablePoisonousMessageProtection: false,
        },
      },
      getDisabledLogger(),
    );
    // Warm both pools.
    await Promise.all(Array.from({ length: 8 }, () => producer.query("SELECT 1")));
    if (ours) await Promise.all(Array.from({ length: 8 }, () => ours.pool.query("SELECT 1")));
    const produce = async (n: number): Promise<void> => {
      if (ours) {
        const [id] = await enqueue(ours.db, [benchEvent(n)]);
        committedAt.set(id ?? "", wallMs());
        return;
      }
      const id = randomUUID();
      const client = await producer.connect();
      try {
        await client.query("BEGIN");
        await store(
          {
            id,
            aggregateType: "bench",
            aggregateId: `key-${n % KEYS}`,
            messageType: "bench.happened",
            segment: `key-${n % KEYS}`,
            concurrency: "parallel",
            payload: { n, body: BODY },
            metadata: { traceparent: TRACEPARENT },
          },
          client,
        );
        await client.query("COMMIT");
        committedAt.set(id, wallMs());
      } finally {
        client.release();
      }
    };
    const { MeasuredChild } = await import("../child.js");
    const child = new MeasuredChild({
      kind: "relay",
      impl,
      sink: "null",
      url,
      aws: ctx.stack.aws,
      topicArn,
      batchSize: impl === "ours" ? 100 : 50,
      expected: total,
      capMs: ctx.sizes.latencySeconds * 1_000 + 15_000,
      listen: true,
      recordTimes: true,
      pollIntervalMs: impl === "ours" ? 1_000 : PTO_LATENCY_POLL_MS,
      poolMax: POOL_MAX,
      pto,
    } satisfies RelayJob);
    try {
      await child.ready;
      child.go();
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Steady rate, one event per transaction, from the parent: up to 8 commits in flight.
      await produceAtRate(rate, total, produce);
      const result = await child.result;
      const published = new Map((result.times as [string, number][] | undefined) ?? []);
      const latencies = [...committedAt]
        .map(([id, at]) => (published.get(id) ?? Number.NaN) - at)
        .filter(Number.isFinite)
        .sort((a, b) => a - b);
      const run: LatencyRun = {
        impl,
        rate,
        events: latencies.length,
        p50: Number(percentile(latencies, 50).toFixed(2)),
        p99: Number(percentile(latencies, 99).toFixed(2)),
        max: Number(percentile(latencies, 100).toFixed(2)),
        negative: latencies.filter((l) => l < 0).length,
        cpuSeconds: result.cpuSeconds,
        maxRssMiB: result.maxRssMiB,
      };
      ctx.record("latency", { ...run });
      ctx.log(
        `  latency ${impl.padEnd(15)} ${rate}/s: ${run.events}/${total} events, p50 ${run.p50} ms, p99 ${run.p99} ms, max ${run.max} ms, CPU ${run.cpuSeconds.toFixed(2)} s`,
      );
      return run;
    } finally {
      child.kill("SIGKILL");
    }
  } finally {
    await producer.end();
    await ours?.close(2_000);
    await dropDatabase(ctx.stack.postgres.adminUrl, url);
  }
}

export async function latency(ctx: BenchContext): Promise<void> {
  ctx.log(
    `commit → publish latency: ${ctx.sizes.latencySeconds} s at ${ctx.sizes.latencyRates.join(", ")} events/s`,
  );
  for (const rate of ctx.sizes.latencyRates) {
    const runs: Record<RelayImpl, LatencyRun[]> = { ours: [], "pto-polling": [], "pto-replication": [] };
    for (let run = 0; run < ctx.runs; run += 1) {
      for (const impl of ["ours", "pto-polling", "pto-replication"] as const) {
        runs[impl].push(await latencyRun(ctx, impl, rate));
      }
    }
    const scenario = `2 commit → publish at ${rate}/s`;
    for (const peer of ["pto-polling", "pto-replication"] as const) {
      const name = peer === "pto-polling" ? `pto polling (${PTO_LATENCY_POLL_MS} ms)` : "pto replication";
      const total = Math.round(rate * ctx.sizes.latencySeconds);
      for (const key of ["p50", "p99", "max"] as const) {
        ctx.rows.push({
          scenario,
          metric: `${key} ms`,
          better: "lower",
          ours: summarize(runs.ours.map((r) => r[key])),
          peer: { name, summary: summarize(runs[peer].map((r) => r[key])) },
          ...(key === "p50"
            ? {
                note: `published (of ${total}, within the run + 15 s): ours ${summarize(runs.ours.map((r) => r.events)).median}, peer ${summarize(runs[peer].map((r) => r.events)).median}; percentiles over those`,
              }
            : {}),
        });
      }
    }
  }
}
