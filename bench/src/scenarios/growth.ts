/**
 * Scenario 8 (growth): what retained history costs. Our relay drains the same pending backlog with
 * 0 / 1 M / 5 M published rows kept (EXPLAIN buffers per claim beside it), the consumer handles
 * messages over an empty and a full inbox, and the relay's retention deletes a day of history, alone
 * and while the relay drains. Each size is a database of its own, filled from empty.
 */
import { performance } from "node:perf_hooks";
import type { DatabaseHandle } from "@outbox/shared";
import { type ClaimBuffers, claimBuffers } from "../claim-plan.js";
import type { BenchContext, Row } from "../context.js";
import { dropDatabase, freshDatabase, ourBacklog } from "../fixtures.js";
import {
  ageOfOldest,
  databaseNow,
  deletePublishedSince,
  fillInboxHistory,
  fillPublishedHistory,
  HISTORY_DAYS,
  historyRows,
  writeOutDirtyPages,
} from "../growth-fixtures.js";
import type { ConsumerImpl } from "../jobs.js";
import { BELOW_RESOLUTION, summarize, tickedCpuMicrosPerItem } from "../measure.js";
import { benchTopic } from "../relay-setup.js";
import { type RetentionSweep, timedRetentionSweep } from "../retention-sweep.js";
import { consumerRun } from "./consumer.js";
import { measuredRelayRun, type RelayRun, type RelaySetup } from "./relay.js";

/** The issue's goal: a figure at the largest size at most this many times its cost at the smallest. */
const GOAL = 1.2;
/** Consumer concurrency: the consumer scenario's middle one, where neither side idles on receives. */
const CONCURRENCY = 10;
/** The inbox's consumer name; the history is filled under it (see fillInboxHistory). */
const GROWTH_CONSUMER = "growth";
const CONSUMER_PEER: ConsumerImpl = "sqs-consumer";
/** The retention's pause between sweeps while the relay drains: it sweeps as soon as it can. */
const SWEEP_INTERVAL_MS = 100;

interface GrowthRelayRun extends RelayRun {
  history: number;
  claimPlan: ClaimBuffers;
  postgresMicrosPerEvent: number;
}

interface RetentionUnderLoad {
  history: number;
  /** A day of history: the rows the retention was set to delete. */
  dayRows: number;
  /** Of them, deleted while the relay drained (the relay's drain ends the sweep). */
  deletedDuringDrain: number;
  relay: GrowthRelayRun;
}

interface RetentionAlone extends RetentionSweep {
  history: number;
  dayRows: number;
  microsPerRow: number;
  walBytesPerRow: number;
}

/** A fresh database migrated to our schema for `use`, dropped afterwards. */
async function withFreshDatabase<T>(
  ctx: BenchContext,
  use: (url: string, handle: DatabaseHandle) => Promise<T>,
): Promise<T> {
  const { url, handle } = await freshDatabase(ctx.stack.postgres.adminUrl, "bench_growth");
  try {
    return await use(url, handle);
  } finally {
    await handle.close(5_000);
    await dropDatabase(ctx.stack.postgres.adminUrl, url);
  }
}

/** Runs per step: `--runs`, capped by the sizes (see Sizes.growthRuns). */
function runsPerStep(ctx: BenchContext): number {
  return Math.max(1, Math.min(ctx.runs, ctx.sizes.growthRuns));
}

/** 1 000 000 as the docs write it. */
function count(n: number): string {
  return n.toLocaleString("en-US").replaceAll(",", " ");
}

/**
 * A backlog on top of the history, the claim's EXPLAIN, one drain by our relay; then the drained rows
 * are deleted again, so the next run sees the same history. `retention` runs the relay's own sweeps
 * during the drain.
 */
async function drainOverHistory(
  ctx: BenchContext,
  database: { url: string; handle: DatabaseHandle; topicArn: string },
  history: number,
  run: number,
  retention?: RelaySetup["retention"],
): Promise<GrowthRelayRun> {
  const { growthBacklog: backlog, ourBatchSize: batchSize } = ctx.sizes;
  const { handle } = database;
  const since = await databaseNow(handle);
  // ourBacklog ends with VACUUM ANALYZE outbox: the history just filled gets its statistics and
  // visibility map too, so the claim is planned as on a long-lived table.
  await ourBacklog(handle, backlog, run * backlog);
  await writeOutDirtyPages(handle);
  const claimPlan = await claimBuffers(handle.pool, batchSize);
  const relay = await measuredRelayRun(
    ctx,
    { impl: "ours", sink: "null", batchSize, timeClaims: true, ...(retention ? { retention } : {}) },
    { url: database.url, pto: undefined },
    database.topicArn,
    backlog,
  );
  await deletePublishedSince(handle, since);
  const postgresMicrosPerEvent = tickedCpuMicrosPerItem(relay.postgresCpuSeconds, relay.events);
  ctx.log(
    `    claim of ${batchSize} over ${count(history)} published rows: ${claimPlan.sharedHit + claimPlan.sharedRead} buffers (${claimPlan.sharedRead} read), ${claimPlan.executionMs} ms`,
  );
  return { ...relay, history, claimPlan, postgresMicrosPerEvent };
}

/** Deletes the oldest day of history with the relay's retention, nothing else running. */
async function retentionAlone(
  ctx: BenchContext,
  handle: DatabaseHandle,
  history: number,
): Promise<RetentionAlone> {
  const dayRows = Math.round(history / HISTORY_DAYS);
  const sweep = await timedRetentionSweep(handle, await ageOfOldest(handle, dayRows));
  const result: RetentionAlone = {
    ...sweep,
    seconds: Number(sweep.seconds.toFixed(2)),
    history,
    dayRows,
    microsPerRow: Math.round((sweep.seconds / Math.max(1, sweep.deleted)) * 1e6),
    walBytesPerRow: Math.round(sweep.walBytes / Math.max(1, sweep.deleted)),
  };
  ctx.log(
    `    retention alone over ${count(history)} rows: ${count(sweep.deleted)} deleted in ${sweep.seconds.toFixed(2)} s (${result.microsPerRow} µs/row), WAL ${(sweep.walBytes / 2 ** 20).toFixed(1)} MiB (${result.walBytesPerRow} B/row)`,
  );
  return result;
}

/** One drain while the relay's retention deletes the (next) oldest day of history. */
async function retentionUnderLoad(
  ctx: BenchContext,
  database: { url: string; handle: DatabaseHandle; topicArn: string },
  history: number,
): Promise<RetentionUnderLoad> {
  const { handle } = database;
  const dayRows = Math.round(history / HISTORY_DAYS);
  const maxAgeMs = await ageOfOldest(handle, dayRows);
  const since = await databaseNow(handle);
  const before = await historyRows(handle, since);
  const relay = await drainOverHistory(ctx, database, history, runsPerStep(ctx), {
    maxAgeMs,
    intervalMs: SWEEP_INTERVAL_MS,
  });
  const deletedDuringDrain = before - (await historyRows(handle, since));
  ctx.log(
    `    relay with retention over ${count(history)} rows: ${relay.eventsPerSecond} events/s, ${count(deletedDuringDrain)} of ${count(dayRows)} rows deleted during the drain`,
  );
  return { history, dayRows, deletedDuringDrain, relay };
}

/** A size's runs of one figure, ours and (where measured) the peer's. */
interface Step {
  size: number;
  ours: number[];
  peer?: number[];
}

/** A step's cost on the median, relative to another's: events/s inverts (fewer is costlier). */
function costRatio(step: Step, base: Step, better: Row["better"], side: "ours" | "peer"): number {
  const median = (of: Step) => summarize(of[side] ?? []).median;
  return better === "higher" ? median(base) / median(step) : median(step) / median(base);
}

/** One figure across the sizes: what `seriesRows` turns into rows. */
interface Series {
  scenario: string;
  metric: string;
  better: Row["better"];
  /** What the sizes count: "published rows", "inbox rows". */
  sizeLabel: string;
  steps: readonly Step[];
  peerName?: string;
  /** Added to the growth row's note. */
  note?: string;
  /** What a step without a figure (NaN) means, said in its row and in the growth row instead of a ratio. */
  missing?: string;
}

/**
 * One row per size (the small "size → figure" table) and one for the growth ratio against the goal;
 * the same on stderr as one line.
 */
function seriesRows(ctx: BenchContext, series: Series): Row[] {
  const { scenario, metric, better, sizeLabel, steps, peerName, missing } = series;
  const unmeasured = (step: Step) => !Number.isFinite(summarize(step.ours).median);
  const rows: Row[] = steps.map((step) => ({
    scenario,
    metric: `${metric} at ${count(step.size)} ${sizeLabel}`,
    better,
    ours: summarize(step.ours),
    ...(peerName && step.peer ? { peer: { name: peerName, summary: summarize(step.peer) } } : {}),
    ...(missing && unmeasured(step) ? { note: missing } : {}),
  }));
  const first = steps[0];
  const last = steps.at(-1);
  if (!first || !last || first === last) return rows;
  const ours = costRatio(last, first, better, "ours");
  const peer = peerName ? costRatio(last, first, better, "peer") : Number.NaN;
  const verdict = Number.isFinite(ours)
    ? ours <= GOAL
      ? "met"
      : "missed"
    : `not measured: ${missing ?? "no figure"}`;
  // The issue's ratio compares the ends only; a size in between that costs more must not hide there.
  const worst = steps.reduce((a, b) =>
    costRatio(b, first, better, "ours") > costRatio(a, first, better, "ours") ? b : a,
  );
  const worstRatio = costRatio(worst, first, better, "ours");
  const between =
    worst !== last && worstRatio > Math.max(ours, GOAL)
      ? `but ${worstRatio.toFixed(2)}× at ${count(worst.size)} ${sizeLabel}`
      : undefined;
  rows.push({
    scenario,
    metric: `${metric}: growth ${count(first.size)} → ${count(last.size)} ${sizeLabel} (cost at the largest / at the smallest)`,
    better: "lower",
    ours: summarize([Number(ours.toFixed(3))]),
    ...(peerName ? { peer: { name: peerName, summary: summarize([Number(peer.toFixed(3))]) } } : {}),
    note: [`goal ≤ ${GOAL}×: ${verdict}`, between, series.note].filter(Boolean).join("; "),
  });
  ctx.log(
    `  growth ${scenario}, ${metric}: ${steps.map((s) => `${count(s.size)} → ${summarize(s.ours).median}`).join(", ")}; growth ${ours.toFixed(2)}× (goal ≤ ${GOAL}×: ${verdict}${between ? `; ${between}` : ""})`,
  );
  return rows;
}

async function consumerOverInbox(ctx: BenchContext, url: string, handle: DatabaseHandle): Promise<Row[]> {
  const { growthRows: steps, growthMessages: messages } = ctx.sizes;
  // Empty and full only: each inbox size is a fill, and the consumer's cost is per insert.
  const sizes = [...new Set([steps[0] ?? 0, steps.at(-1) ?? 0])];
  const cpu: Step[] = [];
  const postgres: Step[] = [];
  for (const size of sizes) {
    await fillInboxHistory(handle, GROWTH_CONSUMER, size, ctx.log);
    const runs: Record<"ours" | "peer", { cpu: number; postgres: number }[]> = { ours: [], peer: [] };
    for (let run = 0; run < runsPerStep(ctx); run += 1) {
      for (const [side, impl] of [
        ["ours", "ours"],
        ["peer", CONSUMER_PEER],
      ] as const) {
        const result = await consumerRun(ctx, url, impl, CONCURRENCY, {
          messages,
          name: GROWTH_CONSUMER,
          recordAs: "growth-consumer",
        });
        runs[side].push({
          cpu: result.cpuMicrosPerMessage,
          postgres: tickedCpuMicrosPerItem(result.postgresCpuSeconds, result.messages),
        });
      }
    }
    cpu.push({ size, ours: runs.ours.map((r) => r.cpu), peer: runs.peer.map((r) => r.cpu) });
    postgres.push({ size, ours: runs.ours.map((r) => r.postgres), peer: runs.peer.map((r) => r.postgres) });
  }
  const scenario = `8c growth: consumer, concurrency ${CONCURRENCY}, ${count(messages)} messages`;
  const common = {
    scenario,
    better: "lower",
    sizeLabel: "inbox rows",
    peerName: "sqs-consumer handleMessage",
  } as const;
  return [
    ...seriesRows(ctx, { ...common, metric: "consumer CPU µs/message", steps: cpu }),
    ...seriesRows(ctx, {
      ...common,
      metric: "Postgres CPU µs/message",
      steps: postgres,
      missing: BELOW_RESOLUTION,
    }),
  ];
}

/** 0 rows again, on a fresh database after the largest step: how far the machine drifted meanwhile. */
function controlRun(ctx: BenchContext, topicArn: string): Promise<GrowthRelayRun> {
  return withFreshDatabase(ctx, (url, handle) => drainOverHistory(ctx, { url, handle, topicArn }, 0, 0));
}

/** A step of the relay's part: the drains over `history` rows and, with history, the retention's. */
async function measureStep(ctx: BenchContext, topicArn: string, history: number) {
  return withFreshDatabase(ctx, async (url, handle) => {
    await fillPublishedHistory(handle, history, ctx.log);
    const database = { url, handle, topicArn };
    const runs: GrowthRelayRun[] = [];
    for (let run = 0; run < runsPerStep(ctx); run += 1) {
      runs.push(await drainOverHistory(ctx, database, history, run));
    }
    for (const r of runs) ctx.record("growth-relay", { ...r });
    if (history === 0) return { runs };
    // One sweep each: every sweep removes a day, so repeating it would measure a shrinking history.
    const alone = await retentionAlone(ctx, handle, history);
    ctx.record("growth-retention", { ...alone });
    const underLoad = await retentionUnderLoad(ctx, database, history);
    ctx.record("growth-retention-under-load", { ...underLoad });
    return { runs, alone, underLoad };
  });
}

export async function growth(ctx: BenchContext): Promise<void> {
  const { growthRows: steps, growthBacklog: backlog } = ctx.sizes;
  ctx.log(
    `growth: ${count(backlog)} pending drained over ${steps.map(count).join(" / ")} published rows (${HISTORY_DAYS} days); consumer over an empty and a full inbox; retention of a day`,
  );
  const t0 = performance.now();
  const elapsed = () => `${Math.round((performance.now() - t0) / 1_000)} s into the scenario`;
  // The null sink publishes nothing, but the relay still maps the events' topic to an ARN.
  const topicArn = await benchTopic(ctx, "growth", true);
  const relay: GrowthRelayRun[][] = [];
  const alone: RetentionAlone[] = [];
  const underLoad: RetentionUnderLoad[] = [];
  // Each size on a database of its own, filled from empty: the history stays in time order (see
  // fillPublishedHistory), and one size's retention leaves the next untouched.
  for (const history of steps) {
    ctx.log(`  step ${count(history)} published rows (${elapsed()})`);
    const step = await measureStep(ctx, topicArn, history);
    relay.push(step.runs);
    if (step.alone) alone.push(step.alone);
    if (step.underLoad) underLoad.push(step.underLoad);
  }
  ctx.log(`  control: 0 published rows again, on a fresh database (${elapsed()})`);
  const control = await controlRun(ctx, topicArn);
  ctx.record("growth-relay-control", { ...control });
  const controlNote = (figure: string) =>
    `0 rows measured again after the largest step, on a fresh database: ${figure} (the machine's drift over the scenario)`;
  const relayStep = (pick: (r: GrowthRelayRun) => number) =>
    relay.map((runs, i) => ({ size: steps[i] ?? 0, ours: runs.map(pick) }));
  const relayScenario = `8a growth: relay, null sink, ${count(backlog)} pending, batch ${ctx.sizes.ourBatchSize}`;
  const retentionScenario = `8b growth: retention of a day (1/${HISTORY_DAYS} of the history, 1 000 rows per DELETE), one sweep`;
  const relaySeries = { scenario: relayScenario, sizeLabel: "published rows" };
  const retentionSeries = {
    scenario: retentionScenario,
    sizeLabel: "published rows",
    better: "lower",
  } as const;
  const retentionStep = (pick: (a: RetentionAlone) => number) =>
    alone.map((a) => ({ size: a.history, ours: [pick(a)] }));
  ctx.rows.push(
    ...seriesRows(ctx, {
      ...relaySeries,
      metric: "events/s",
      better: "higher",
      steps: relayStep((r) => r.eventsPerSecond),
      note: controlNote(`${control.eventsPerSecond} events/s`),
    }),
    ...seriesRows(ctx, {
      ...relaySeries,
      metric: "claim p99 ms",
      better: "lower",
      steps: relayStep((r) => r.claimP99Ms ?? Number.NaN),
      note: controlNote(`${control.claimP99Ms} ms`),
    }),
    ...seriesRows(ctx, {
      ...relaySeries,
      metric: "EXPLAIN buffers per claim (shared hit + read)",
      better: "lower",
      steps: relayStep((r) => r.claimPlan.sharedHit + r.claimPlan.sharedRead),
    }),
    ...seriesRows(ctx, {
      ...retentionSeries,
      metric: "seconds to delete a day",
      steps: retentionStep((a) => a.seconds),
    }),
    ...seriesRows(ctx, {
      ...retentionSeries,
      metric: "µs per row deleted",
      steps: retentionStep((a) => a.microsPerRow),
    }),
    ...seriesRows(ctx, {
      ...retentionSeries,
      metric: "WAL bytes per row deleted",
      steps: retentionStep((a) => a.walBytesPerRow),
    }),
    ...underLoad.map((loaded): Row => {
      const without = summarize(
        relay[steps.indexOf(loaded.history)]?.map((r) => r.eventsPerSecond) ?? [],
      ).median;
      return {
        scenario: retentionScenario,
        metric: `relay events/s while the retention deletes a day at ${count(loaded.history)} published rows`,
        better: "higher",
        ours: summarize([loaded.relay.eventsPerSecond]),
        note: `${Math.round((loaded.relay.eventsPerSecond / without) * 100)} % of the drain without retention at this size (${without} events/s); ${count(loaded.deletedDuringDrain)} of ${count(loaded.dayRows)} rows deleted during the ${loaded.relay.seconds.toFixed(1)} s drain`,
      };
    }),
  );
  ctx.log(`  consumer (${elapsed()})`);
  ctx.rows.push(...(await withFreshDatabase(ctx, (url, handle) => consumerOverInbox(ctx, url, handle))));
  ctx.log(`  growth done (${elapsed()})`);
}
