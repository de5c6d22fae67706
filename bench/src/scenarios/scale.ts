/**
 * Scenario 5 (scale): our relay with 1, 2, 4 replicas on one table; our consumer with 1, 2, 4
 * processes, beside as many processes that only receive and delete (the SQS server's ceiling).
 */
import { randomUUID } from "node:crypto";
import { bootstrapResources } from "@outbox/devstack";
import { runTogether } from "../child.js";
import type { BenchContext } from "../context.js";
import { dropDatabase, freshDatabase, ourBacklog } from "../fixtures.js";
import type { RelayJob } from "../jobs.js";
import { machineBusyPercent, machineJiffies, postgresCpuSeconds, summarize } from "../measure.js";
import { consumerJob, filledQueue } from "./consumer.js";

export interface ScaleRun {
  /** "bare-sdk": receive + delete loops without Postgres, the SQS server's ceiling. */
  subject: "relay" | "consumer" | "bare-sdk";
  processes: number;
  items: number;
  seconds: number;
  perSecond: number;
  /** All subject processes together. */
  cpuSeconds: number;
  cpuMicrosPerItem: number;
  postgresCpuSeconds: number;
  machineBusyPercent: number;
  capped: boolean;
}

async function relayScaleRun(ctx: BenchContext, replicas: number): Promise<ScaleRun> {
  const events = ctx.sizes.scaleEvents;
  const { url, handle } = await freshDatabase(ctx.stack.postgres.adminUrl);
  await ourBacklog(handle, events);
  await handle.close(5_000);
  const { topicArn } = await bootstrapResources(ctx.stack.aws, {
    name: `bench-scale-${randomUUID().slice(0, 8)}`,
    rawDelivery: true,
  });
  try {
    const job: RelayJob = {
      kind: "relay",
      impl: "ours",
      sink: "null",
      url,
      aws: ctx.stack.aws,
      topicArn,
      batchSize: ctx.sizes.ourBatchSize,
      expected: null,
      capMs: 300_000,
      listen: true,
      recordTimes: false,
      pollIntervalMs: 1_000,
      poolMax: 20,
    };
    const pg = postgresCpuSeconds(ctx.postmasterPid);
    const machine = machineJiffies();
    const outcome = await runTogether(
      Array.from({ length: replicas }, () => job),
      (total) => total >= events,
      300_000,
    );
    return scaleRun(ctx, "relay", replicas, outcome, pg, machine);
  } finally {
    await dropDatabase(ctx.stack.postgres.adminUrl, url);
  }
}

function scaleRun(
  ctx: BenchContext,
  subject: ScaleRun["subject"],
  processes: number,
  outcome: Awaited<ReturnType<typeof runTogether>>,
  pgBefore: number,
  machine: ReturnType<typeof machineJiffies>,
): ScaleRun {
  const busy = machineBusyPercent(machine);
  const cpuSeconds = outcome.results.reduce((sum, r) => sum + r.cpuSeconds, 0);
  const run: ScaleRun = {
    subject,
    processes,
    items: outcome.total,
    seconds: Number(outcome.seconds.toFixed(2)),
    perSecond: Math.round(outcome.total / outcome.seconds),
    cpuSeconds: Number(cpuSeconds.toFixed(2)),
    cpuMicrosPerItem: Math.round((cpuSeconds / Math.max(1, outcome.total)) * 1e6),
    postgresCpuSeconds: Number((postgresCpuSeconds(ctx.postmasterPid) - pgBefore).toFixed(2)),
    machineBusyPercent: busy,
    capped: outcome.capped,
  };
  ctx.record("scale", { ...run, perProcess: outcome.results.map((r) => r.count) });
  ctx.log(
    `  scale ${subject} ×${processes}: ${run.items} in ${run.seconds} s = ${run.perSecond}/s, ${run.cpuMicrosPerItem} µs CPU/item, Postgres CPU ${run.postgresCpuSeconds} s, machine ${busy}% busy`,
  );
  return run;
}

async function consumerScaleRun(
  ctx: BenchContext,
  url: string,
  processes: number,
  impl: "ours" | "bare-sdk",
): Promise<ScaleRun> {
  const messages = ctx.sizes.scaleMessages;
  const queueUrl = await filledQueue(ctx, messages);
  // Each process with the daemon's defaults: 2 pollers, 20 in flight.
  const jobs = Array.from({ length: processes }, () => ({
    ...consumerJob(ctx, impl, url, queueUrl, 20, null),
    name: "scale",
    pollers: 2,
  }));
  const pg = postgresCpuSeconds(ctx.postmasterPid);
  const machine = machineJiffies();
  const outcome = await runTogether(jobs, (total) => total >= messages, 300_000);
  return scaleRun(ctx, impl === "ours" ? "consumer" : "bare-sdk", processes, outcome, pg, machine);
}

export async function scale(ctx: BenchContext): Promise<void> {
  ctx.log(
    `scale: relay replicas ${ctx.sizes.replicas.join("/")} on ${ctx.sizes.scaleEvents} events; consumer processes on ${ctx.sizes.scaleMessages} messages`,
  );
  const relay = new Map<number, ScaleRun[]>();
  const consumer = new Map<number, ScaleRun[]>();
  const bareSdk = new Map<number, ScaleRun[]>();
  const { url, handle } = await freshDatabase(ctx.stack.postgres.adminUrl, "bench_scale");
  await handle.close(5_000);
  try {
    for (let run = 0; run < ctx.runs; run += 1) {
      for (const n of ctx.sizes.replicas) {
        relay.set(n, [...(relay.get(n) ?? []), await relayScaleRun(ctx, n)]);
        consumer.set(n, [...(consumer.get(n) ?? []), await consumerScaleRun(ctx, url, n, "ours")]);
        bareSdk.set(n, [...(bareSdk.get(n) ?? []), await consumerScaleRun(ctx, url, n, "bare-sdk")]);
      }
    }
  } finally {
    await dropDatabase(ctx.stack.postgres.adminUrl, url);
  }
  // Ours beside receive + delete alone at the same number of processes: where the SQS server, not
  // the consumer, sets the rate.
  for (const n of ctx.sizes.replicas) {
    ctx.rows.push({
      scenario: "5 scale: consumer processes against the bare SDK (receive + delete, no Postgres)",
      metric: `messages/s, ${n} process(es)`,
      better: "higher",
      ours: summarize((consumer.get(n) ?? []).map((r) => r.perSecond)),
      peer: { name: `bare SDK ×${n}`, summary: summarize((bareSdk.get(n) ?? []).map((r) => r.perSecond)) },
      note: `bare SDK ${summarize((bareSdk.get(n) ?? []).map((r) => r.cpuMicrosPerItem)).median} µs CPU/message`,
    });
  }
  const one = (runs: Map<number, ScaleRun[]>) => runs.get(ctx.sizes.replicas[0] ?? 1) ?? [];
  for (const [label, runs, unit] of [
    ["relay replicas (null sink)", relay, "events/s"],
    ["consumer processes (2 pollers, 20 in flight each)", consumer, "messages/s"],
  ] as const) {
    for (const n of ctx.sizes.replicas) {
      if (n === ctx.sizes.replicas[0]) continue;
      const these = runs.get(n) ?? [];
      ctx.rows.push(
        {
          scenario: `5 scale: ${label}`,
          metric: `${unit}, ${n} vs ${ctx.sizes.replicas[0]} process(es)`,
          better: "higher",
          ours: summarize(these.map((r) => r.perSecond)),
          peer: {
            name: `ours ×${ctx.sizes.replicas[0]}`,
            summary: summarize(one(runs).map((r) => r.perSecond)),
          },
        },
        {
          scenario: `5 scale: ${label}`,
          metric: `CPU µs/item, ${n} vs ${ctx.sizes.replicas[0]}`,
          better: "lower",
          ours: summarize(these.map((r) => r.cpuMicrosPerItem)),
          peer: {
            name: `ours ×${ctx.sizes.replicas[0]}`,
            summary: summarize(one(runs).map((r) => r.cpuMicrosPerItem)),
          },
          note: `machine busy ${summarize(these.map((r) => r.machineBusyPercent)).median}%, Postgres CPU ${summarize(these.map((r) => r.postgresCpuSeconds)).median} s`,
        },
      );
    }
  }
}
