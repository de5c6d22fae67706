/** Scenario 2 (commit → publish latency): our relay vs pg-transactional-outbox at steady rates. */

import type { BenchContext } from "../context.js";
import { dropDatabase } from "../fixtures.js";
import type { RelayImpl } from "../jobs.js";
import { commitToPublishMs, type LatencyRun, latencyFigures } from "../latency/latency-figures.js";
import { latencyJob, PTO_LATENCY_CONTROLLER, PTO_LATENCY_POLL_MS } from "../latency/latency-job.js";
import { startLatencyProducer } from "../latency/latency-producer.js";
import { measureWhileProducing } from "../latency/measure-while-producing.js";
import { produceAtRate, summarize } from "../measure.js";
import { ptoControllerLabel } from "../pto-controllers.js";
import { benchTopic, preparedRelayDatabase, RELAY_POOL_MAX } from "../relay-setup.js";

async function latencyRun(ctx: BenchContext, impl: RelayImpl, rate: number): Promise<LatencyRun> {
  const total = Math.max(1, Math.round(rate * ctx.sizes.latencySeconds));
  const { url, pto } = await preparedRelayDatabase(ctx, impl, 0);
  try {
    const topicArn = await benchTopic(ctx, "latency");
    const producer = await startLatencyProducer(url, impl);
    try {
      const job = latencyJob(ctx, { impl, url, pto, topicArn, total });
      // Steady rate, one event per transaction, from the parent: up to 8 commits in flight.
      const result = await measureWhileProducing(job, () => produceAtRate(rate, total, producer.produce));
      const run = latencyFigures(impl, rate, commitToPublishMs(producer.committedAt, result), result);
      ctx.record("latency", { ...run });
      ctx.log(
        `  latency ${impl.padEnd(15)} ${rate}/s: ${run.events}/${total} events, p50 ${run.p50} ms, p99 ${run.p99} ms, max ${run.max} ms, CPU ${run.cpuSeconds.toFixed(2)} s`,
      );
      return run;
    } finally {
      await producer.close();
    }
  } finally {
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
          : `pto replication (${ptoControllerLabel(PTO_LATENCY_CONTROLLER, RELAY_POOL_MAX)})`;
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
                note: `published (of ${total}, within the run + ${ctx.sizes.latencyGraceSeconds} s): ours ${summarize(runs.ours.map((r) => r.events)).median}, peer ${summarize(runs[peer].map((r) => r.events)).median}; percentiles over those`,
              }
            : {}),
        });
      }
    }
  }
}
