/**
 * Scenario 6: our relay drains a backlog into the SNS emulator answering every call 20 ms late, as
 * real SNS does (10–30 ms), beside Little's law: with `publishConcurrency` PublishBatch calls in
 * flight, 10 messages each, no relay can beat `publishConcurrency × 10 / latency`. Beside it the bare
 * SDK (as many PublishBatch loops, no Postgres): what this machine lets any relay reach, and the floor
 * of the CPU a relay spends per event.
 */
import { MAX_BATCH_ENTRIES } from "@outbox/client/internal";
import type { BenchContext } from "../context.js";
import { summarize } from "../measure.js";
import { OUR_PUBLISH_CONCURRENCY } from "../subjects/our-relay.js";
import { type RelayRun, relayThroughputRun } from "./relay.js";

const SNS_LATENCY_MS = 20;
/** What the relay should reach of the bound: the rest is its own time between calls. */
const TARGET_PERCENT = 80;
/** The most CPU per event the relay should spend over the bare SDK's, through local SNS. */
const TARGET_CPU_RATIO = 1.3;

export async function relayLatencySns(ctx: BenchContext): Promise<void> {
  const bound = (OUR_PUBLISH_CONCURRENCY * MAX_BATCH_ENTRIES * 1_000) / SNS_LATENCY_MS;
  ctx.log(
    `relay with SNS answering in ${SNS_LATENCY_MS} ms: ${ctx.sizes.snsLatencyEvents} events backlog → drained; bound ${bound} events/s`,
  );
  const runs: RelayRun[] = [];
  // The same drain without the fault: what the emulator itself (in the bench's process) lets through
  // on this machine, so a shortfall can be told apart from the relay's.
  const unfaulted: RelayRun[] = [];
  const bare: RelayRun[] = [];
  // The null sink answering as late: the relay's own use of its publish capacity, the emulator's CPU (in the
  // bench's process, on the same cores) out of the way.
  const nullSink: RelayRun[] = [];
  const bareUnfaulted: RelayRun[] = [];
  const setup = {
    impl: "ours",
    sink: "sns",
    batchSize: ctx.sizes.ourBatchSize,
    events: ctx.sizes.snsLatencyEvents,
    withoutSubscribers: true,
  } as const;
  const bareSetup = { ...setup, impl: "bare-sdk" } as const;
  for (let run = 0; run < ctx.runs; run += 1) {
    runs.push(await relayThroughputRun(ctx, { ...setup, snsLatencyMs: SNS_LATENCY_MS }));
    bare.push(await relayThroughputRun(ctx, { ...bareSetup, snsLatencyMs: SNS_LATENCY_MS }));
    nullSink.push(await relayThroughputRun(ctx, { ...setup, sink: "null", snsLatencyMs: SNS_LATENCY_MS }));
    unfaulted.push(await relayThroughputRun(ctx, setup));
    bareUnfaulted.push(await relayThroughputRun(ctx, bareSetup));
  }
  const rates = summarize(runs.map((r) => r.eventsPerSecond));
  const unfaultedRates = summarize(unfaulted.map((r) => r.eventsPerSecond));
  const bareRates = summarize(bare.map((r) => r.eventsPerSecond));
  const nullSinkRates = summarize(nullSink.map((r) => r.eventsPerSecond));
  const cpu = summarize(unfaulted.map((r) => r.cpuMicrosPerEvent));
  const bareCpu = summarize(bareUnfaulted.map((r) => r.cpuMicrosPerEvent));
  const percent = (rate: number) => Math.round((rate / bound) * 100);
  ctx.record("relay-latency-sns", {
    boundEventsPerSecond: bound,
    percentOfBound: runs.map((r) => percent(r.eventsPerSecond)),
    withoutFaultEventsPerSecond: unfaultedRates.runs,
    bareSdkPercentOfBound: bare.map((r) => percent(r.eventsPerSecond)),
    nullSinkPercentOfBound: nullSink.map((r) => percent(r.eventsPerSecond)),
    cpuRatioToBareSdk: unfaulted.map((r, i) =>
      Number((r.cpuMicrosPerEvent / Math.max(1, bareUnfaulted[i]?.cpuMicrosPerEvent ?? 0)).toFixed(2)),
    ),
  });
  const bareName = `bare SDK: ${OUR_PUBLISH_CONCURRENCY} PublishBatch loops × ${MAX_BATCH_ENTRIES}, no Postgres`;
  ctx.rows.push({
    scenario: `6 relay, SNS answering in ${SNS_LATENCY_MS} ms`,
    metric: "events/s",
    better: "higher",
    ours: rates,
    // The bound stands where a peer would: the ratio column is the share of it reached.
    peer: {
      name: `Little's-law bound: ${OUR_PUBLISH_CONCURRENCY} in flight × ${MAX_BATCH_ENTRIES} / ${SNS_LATENCY_MS} ms`,
      summary: summarize(runs.map(() => bound)),
    },
    note: `${percent(rates.median)} % of the bound ${bound} events/s (target ≥ ${TARGET_PERCENT} %); the bare SDK ${percent(bareRates.median)} %; without the fault ${unfaultedRates.median} events/s; topic without subscribers; batch ${ctx.sizes.ourBatchSize}, ${ctx.sizes.snsLatencyEvents} events`,
  });
  ctx.rows.push(
    {
      scenario: `6 relay, a null sink answering in ${SNS_LATENCY_MS} ms`,
      metric: "events/s",
      better: "higher",
      ours: nullSinkRates,
      peer: {
        name: `Little's-law bound: ${OUR_PUBLISH_CONCURRENCY} in flight × ${MAX_BATCH_ENTRIES} / ${SNS_LATENCY_MS} ms`,
        summary: summarize(nullSink.map(() => bound)),
      },
      note: `${percent(nullSinkRates.median)} % of the bound: the relay's publish capacity with no emulator on the machine's cores`,
    },
    {
      scenario: `6 relay, SNS answering in ${SNS_LATENCY_MS} ms`,
      metric: "events/s",
      better: "higher",
      ours: rates,
      peer: { name: bareName, summary: bareRates },
      note: "the same fault: what this machine lets through at all with as many calls in flight",
    },
    {
      scenario: "6 relay, local SNS without the fault",
      metric: "relay CPU µs/event",
      better: "lower",
      ours: cpu,
      peer: { name: bareName, summary: bareCpu },
      note: `the relay's CPU per event over the bare SDK's (target ≤ ${TARGET_CPU_RATIO}×); ${unfaultedRates.median} vs ${summarize(bareUnfaulted.map((r) => r.eventsPerSecond)).median} events/s`,
    },
  );
}
