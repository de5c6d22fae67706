/** Scenarios 1 (relay throughput) and 2 (commit → publish latency): our relay vs pg-transactional-outbox. */
import { randomUUID } from "node:crypto";
import { CreateTopicCommand } from "@aws-sdk/client-sns";
import { enqueue } from "@outbox/client";
import { bootstrapResources, type FaultClient, snsClient } from "@outbox/devstack";
import { createDatabase } from "@outbox/shared";
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
import { type PtoController, ptoControllerLabel } from "../subjects/pto-controllers.js";

const PTO_LATENCY_POLL_MS = 250; // its README example's nextMessagesPollingIntervalInMs
/**
 * The replication listener's controller for the latency runs: bounded like its handler pool, so a
 * burst never queues thousands of messages (full concurrency re-sorts every in-flight LSN per ack).
 */
const PTO_LATENCY_CONTROLLER: PtoController = "semaphore";
const POOL_MAX = 20;

/** Which relay runs, and how: the knobs the bench tunes for each peer. */
export interface RelaySetup {
  impl: RelayImpl;
  sink: Sink;
  batchSize: number;
  /** pto-replication only. */
  ptoController?: PtoController;
  /** The SNS emulator answers each call on the run's topic this much later (its latency fault). */
  snsLatencyMs?: number;
  /** Backlog size; the sizes' relayEvents when omitted. */
  events?: number;
  /**
   * Publish to a topic nobody subscribes to. Real SNS fans out on its own machines; the emulator does
   * it on our 2 cores, in the bench's process, which would cap a run meant to time the relay's calls.
   */
  withoutSubscribers?: boolean;
}

export interface RelayRun extends RelaySetup {
  events: number;
  seconds: number;
  eventsPerSecond: number;
  cpuSeconds: number;
  cpuMicrosPerEvent: number;
  maxRssMiB: number;
  postgresCpuSeconds: number;
  capped: boolean;
}

async function topic(ctx: BenchContext, label: string, withoutSubscribers = false): Promise<string> {
  const name = `bench-${label}-${randomUUID().slice(0, 8)}`;
  if (withoutSubscribers) {
    const { TopicArn } = await snsClient(ctx.stack.aws).send(new CreateTopicCommand({ Name: name }));
    if (TopicArn === undefined) throw new Error(`CreateTopic ${name} returned no TopicArn`);
    return TopicArn;
  }
  const { topicArn } = await bootstrapResources(ctx.stack.aws, {
    name,
    rawDelivery: true,
  });
  return topicArn;
}

function faultControl(ctx: BenchContext): FaultClient {
  if (!ctx.stack.faults)
    throw new Error("SNS latency needs the embedded stack's SNS emulator (fault injection)");
  return ctx.stack.faults;
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

export async function relayThroughputRun(ctx: BenchContext, setup: RelaySetup): Promise<RelayRun> {
  const { impl, sink, batchSize, ptoController } = setup;
  const events = setup.events ?? ctx.sizes.relayEvents;
  const { url, pto } = await prepared(ctx, impl, events);
  const topicArn = await topic(ctx, "relay", setup.withoutSubscribers);
  const faults = setup.snsLatencyMs === undefined ? undefined : faultControl(ctx);
  await faults?.set({ topics: [topicArn], latencyMs: setup.snsLatencyMs });
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
      ...(ptoController ? { ptoController } : {}),
    };
    const pgBefore = postgresCpuSeconds(ctx.postmasterPid);
    // BENCH_CPU_PROF=dir: a CPU profile of each subject process (adds overhead: not for the figures).
    const result = await runJob(
      job,
      process.env.BENCH_CPU_PROF ? { cpuProfDir: process.env.BENCH_CPU_PROF } : {},
    );
    const run: RelayRun = {
      ...setup,
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
      `  relay ${impl.padEnd(15)} sink=${sink.padEnd(4)}${setup.snsLatencyMs === undefined ? "" : ` +${setup.snsLatencyMs} ms`} ${ptoController ? `controller=${ptoController}` : `batch=${String(batchSize).padStart(4)}`}: ${run.events} events in ${run.seconds.toFixed(2)} s = ${run.eventsPerSecond} events/s, CPU ${run.cpuSeconds.toFixed(2)} s (${run.cpuMicrosPerEvent} µs/event), Postgres CPU ${run.postgresCpuSeconds} s, RSS ${run.maxRssMiB} MiB${run.capped ? " (capped)" : ""}`,
    );
    return run;
  } finally {
    await faults?.clear({ topics: [topicArn] });
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

/** The candidate that drained fastest, and every candidate's figure for the row's note. */
interface Tuned<T extends string | number> {
  best: T;
  /** e.g. "10: 812, 50: 1 020 events/s"; empty when there was a single candidate. */
  tried: string;
}

/** Runs each candidate once on the null sink and keeps the fastest; a single candidate is not run. */
async function fastest<T extends string | number>(
  ctx: BenchContext,
  candidates: readonly T[],
  setup: (candidate: T) => RelaySetup,
): Promise<Tuned<T>> {
  const [first] = candidates;
  if (first === undefined) throw new Error("nothing to tune among");
  if (candidates.length === 1) return { best: first, tried: "" };
  let best = { candidate: first, rate: -1 };
  const tried: string[] = [];
  for (const candidate of candidates) {
    const run = await relayThroughputRun(ctx, setup(candidate));
    tried.push(`${String(candidate)}: ${run.eventsPerSecond}${run.capped ? " (capped)" : ""}`);
    if (run.eventsPerSecond > best.rate) best = { candidate, rate: run.eventsPerSecond };
  }
  return { best: best.candidate, tried: `${tried.join(", ")} events/s` };
}

export async function relayThroughput(ctx: BenchContext): Promise<void> {
  const { sizes, runs } = ctx;
  ctx.log(
    `relay throughput: ${sizes.relayEvents} events backlog → drained; peers capped at ${sizes.relayCapMs} ms`,
  );
  // Each pg-transactional-outbox listener at its best: the polling one's batch size, the
  // replication one's concurrency controller, picked by one null-sink run each.
  ctx.log("  tuning pg-transactional-outbox: polling batch size, replication concurrency controller");
  const polling = await fastest(ctx, sizes.ptoBatchSizes, (batchSize) => ({
    impl: "pto-polling",
    sink: "null",
    batchSize,
  }));
  const replication = await fastest(ctx, sizes.ptoControllers, (ptoController) => ({
    impl: "pto-replication",
    sink: "null",
    batchSize: 0,
    ptoController,
  }));
  ctx.record("relay-tuning", {
    ptoPollingBestBatchSize: polling.best,
    ptoPollingTried: polling.tried,
    ptoReplicationBestController: replication.best,
    ptoReplicationTried: replication.tried,
  });
  const pollingName = `pto polling (batch ${polling.best}, parallel)`;
  const replicationName = `pto replication (${ptoControllerLabel(replication.best, POOL_MAX)})`;
  for (const sink of ["null", "sns"] as const) {
    const ours: RelayRun[] = [];
    const pollingRuns: RelayRun[] = [];
    const replicationRuns: RelayRun[] = [];
    for (let run = 0; run < runs; run += 1) {
      ours.push(await relayThroughputRun(ctx, { impl: "ours", sink, batchSize: sizes.ourBatchSize }));
      pollingRuns.push(await relayThroughputRun(ctx, { impl: "pto-polling", sink, batchSize: polling.best }));
      replicationRuns.push(
        await relayThroughputRun(ctx, {
          impl: "pto-replication",
          sink,
          batchSize: 0,
          ptoController: replication.best,
        }),
      );
    }
    const scenario = `1${sink === "null" ? "a" : "b"} relay, ${sink === "null" ? "null sink (DB-bound)" : "local SNS"}`;
    const note = (runsOfPeer: RelayRun[], knob: string, tuned: Tuned<string | number>) =>
      [
        tuned.tried ? `${knob} picked by one null-sink run each: ${tuned.tried}` : "",
        runsOfPeer.some((r) => r.capped)
          ? `peer runs stopped at ${sizes.relayCapMs / 1_000} s, rate so far`
          : "",
      ]
        .filter(Boolean)
        .join("; ");
    ctx.rows.push(
      ...rowsFor(scenario, ours, pollingName, pollingRuns, note(pollingRuns, "batch size", polling)),
      ...rowsFor(
        scenario,
        ours,
        replicationName,
        replicationRuns,
        note(replicationRuns, "controller", replication),
      ),
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
      ...(impl === "pto-replication" ? { ptoController: PTO_LATENCY_CONTROLLER } : {}),
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
      const name =
        peer === "pto-polling"
          ? `pto polling (${PTO_LATENCY_POLL_MS} ms)`
          : `pto replication (${ptoControllerLabel(PTO_LATENCY_CONTROLLER, POOL_MAX)})`;
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
