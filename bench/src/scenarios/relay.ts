/** Scenario 1 (relay throughput): our relay vs pg-transactional-outbox, draining a backlog. */
import type { FaultClient } from "@outbox/devstack";
import type { RetentionOptions } from "@outbox/relay";
import { runJob } from "../child.js";
import type { BenchContext, Row } from "../context.js";
import { dropDatabase } from "../fixtures.js";
import type { RelayJob, RelaySubject, Sink } from "../jobs.js";
import { percentile, postgresCpuSeconds, summarize } from "../measure.js";
import { type PtoController, ptoControllerLabel } from "../pto-controllers.js";
import type { PtoNames } from "../pto-fixtures.js";
import { benchTopic, preparedRelayDatabase, RELAY_POOL_MAX } from "../relay-setup.js";

/** Which relay runs, and how: the knobs the bench tunes for each peer. */
export interface RelaySetup {
  impl: RelaySubject;
  sink: Sink;
  batchSize: number;
  /** pto-replication only. */
  ptoController?: PtoController;
  /**
   * The bus answers each call this much later: the SNS emulator's latency fault on the run's topic,
   * or, with the null sink, the null publisher's own wait (a bus whose work is not on this machine).
   */
  snsLatencyMs?: number;
  /** Backlog size; the sizes' relayEvents when omitted. */
  events?: number;
  /** Ours: time each claim statement (RelayRun's claim figures). */
  timeClaims?: boolean;
  /** Ours: the relay's own retention sweeps during the drain. */
  retention?: RetentionOptions;
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
  /** With `timeClaims`: claim statements timed, and their median and 99th percentile. */
  claims?: number;
  claimP50Ms?: number;
  claimP99Ms?: number;
}

function faultControl(ctx: BenchContext): FaultClient {
  if (!ctx.stack.faults)
    throw new Error("SNS latency needs the embedded stack's SNS emulator (fault injection)");
  return ctx.stack.faults;
}

export async function relayThroughputRun(ctx: BenchContext, setup: RelaySetup): Promise<RelayRun> {
  const events = setup.events ?? ctx.sizes.relayEvents;
  const database = await preparedRelayDatabase(ctx, setup.impl, events);
  const topicArn = await benchTopic(ctx, "relay", setup.withoutSubscribers);
  const faults = setup.snsLatencyMs === undefined || setup.sink === "null" ? undefined : faultControl(ctx);
  await faults?.set({ topics: [topicArn], latencyMs: setup.snsLatencyMs });
  try {
    const run = await measuredRelayRun(ctx, setup, database, topicArn, events);
    ctx.record("relay-throughput", { ...run });
    return run;
  } finally {
    await faults?.clear({ topics: [topicArn] });
    await dropDatabase(ctx.stack.postgres.adminUrl, database.url);
  }
}

/**
 * One measured drain of `events` already in the database at `database.url`, by the relay `setup`
 * names, in a child of its own. The caller prepares the database and the topic and cleans them up.
 */
export async function measuredRelayRun(
  ctx: BenchContext,
  setup: RelaySetup,
  database: { url: string; pto: PtoNames | undefined },
  topicArn: string,
  events: number,
): Promise<RelayRun> {
  const { impl, sink, batchSize, ptoController } = setup;
  const job: RelayJob = {
    kind: "relay",
    impl,
    sink,
    url: database.url,
    aws: ctx.stack.aws,
    topicArn,
    batchSize,
    expected: events,
    // The peers are stopped early (they are slow); ours and the bare SDK drain the whole backlog.
    capMs: impl === "ours" || impl === "bare-sdk" ? 300_000 : ctx.sizes.relayCapMs,
    listen: impl === "ours",
    recordTimes: false,
    pollIntervalMs: impl === "ours" ? 1_000 : 500,
    poolMax: RELAY_POOL_MAX,
    ...(sink === "null" && setup.snsLatencyMs !== undefined ? { nullLatencyMs: setup.snsLatencyMs } : {}),
    pto: database.pto,
    ...(ptoController ? { ptoController } : {}),
    ...(setup.timeClaims ? { timeClaims: true } : {}),
    ...(setup.retention ? { retention: setup.retention } : {}),
  };
  const pgBefore = postgresCpuSeconds(ctx.postmasterPid);
  // BENCH_CPU_PROF=dir: a CPU profile of each subject's measured part (adds overhead: not for the figures).
  const result = await runJob(
    job,
    process.env.BENCH_CPU_PROF ? { cpuProfDir: process.env.BENCH_CPU_PROF } : {},
  );
  const claimMs = Array.isArray(result.claimMs) ? (result.claimMs as number[]).sort((a, b) => a - b) : [];
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
    ...(setup.timeClaims
      ? {
          claims: claimMs.length,
          claimP50Ms: Number(percentile(claimMs, 50).toFixed(2)),
          claimP99Ms: Number(percentile(claimMs, 99).toFixed(2)),
        }
      : {}),
  };
  const claims = setup.timeClaims
    ? `, ${run.claims} claims p50 ${run.claimP50Ms} ms p99 ${run.claimP99Ms} ms`
    : "";
  ctx.log(
    `  relay ${impl.padEnd(15)} sink=${sink.padEnd(4)}${setup.snsLatencyMs === undefined ? "" : ` +${setup.snsLatencyMs} ms`} ${ptoController ? `controller=${ptoController}` : `batch=${String(batchSize).padStart(4)}`}: ${run.events} events in ${run.seconds.toFixed(2)} s = ${run.eventsPerSecond} events/s, CPU ${run.cpuSeconds.toFixed(2)} s (${run.cpuMicrosPerEvent} µs/event), Postgres CPU ${run.postgresCpuSeconds} s, RSS ${run.maxRssMiB} MiB${claims}${run.capped ? " (capped)" : ""}`,
  );
  return run;
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
  const replicationName = `pto replication (${ptoControllerLabel(replication.best, RELAY_POOL_MAX)})`;
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
