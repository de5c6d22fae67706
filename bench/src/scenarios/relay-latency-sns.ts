/**
 * Scenario 6: our relay drains a backlog into the SNS emulator answering every call 20 ms late, as
 * real SNS does (10–30 ms), beside Little's law: with `publishConcurrency` PublishBatch calls in
 * flight, 10 messages each, no relay can beat `publishConcurrency × 10 / latency`.
 */
import { MAX_BATCH_ENTRIES } from "@outbox/client";
import type { BenchContext } from "../context.js";
import { summarize } from "../measure.js";
import { OUR_PUBLISH_CONCURRENCY } from "../subjects/our-relay.js";
import { type RelayRun, relayThroughputRun } from "./relay.js";

const SNS_LATENCY_MS = 20;
/** What the relay should reach of the bound: the rest is its own time between calls. */
const TARGET_PERCENT = 90;

export async function relayLatencySns(ctx: BenchContext): Promise<void> {
  const bound = (OUR_PUBLISH_CONCURRENCY * MAX_BATCH_ENTRIES * 1_000) / SNS_LATENCY_MS;
  ctx.log(
    `relay with SNS answering in ${SNS_LATENCY_MS} ms: ${ctx.sizes.snsLatencyEvents} events backlog → drained; bound ${bound} events/s`,
  );
  const runs: RelayRun[] = [];
  // The same drain without the fault: what the emulator itself (in the bench's process) lets through
  // on this machine, so a shortfall can be told apart from the relay's.
  const unfaulted: RelayRun[] = [];
  const setup = {
    impl: "ours",
    sink: "sns",
    batchSize: ctx.sizes.ourBatchSize,
    events: ctx.sizes.snsLatencyEvents,
    withoutSubscribers: true,
  } as const;
  for (let run = 0; run < ctx.runs; run += 1) {
    runs.push(await relayThroughputRun(ctx, { ...setup, snsLatencyMs: SNS_LATENCY_MS }));
    unfaulted.push(await relayThroughputRun(ctx, setup));
  }
  const rates = summarize(runs.map((r) => r.eventsPerSecond));
  const unfaultedRates = summarize(unfaulted.map((r) => r.eventsPerSecond));
  const percent = (rate: number) => Math.round((rate / bound) * 100);
  ctx.record("relay-latency-sns", {
    boundEventsPerSecond: bound,
    percentOfBound: runs.map((r) => percent(r.eventsPerSecond)),
    withoutFaultEventsPerSecond: unfaultedRates.runs,
  });
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
    note: `${percent(rates.median)} % of the bound ${bound} events/s (target ≥ ${TARGET_PERCENT} %); without the fault ${unfaultedRates.median} events/s; topic without subscribers; batch ${ctx.sizes.ourBatchSize}, ${ctx.sizes.snsLatencyEvents} events`,
  });
}
