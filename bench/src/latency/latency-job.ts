/** The relay child of one latency run: NOTIFY-woken, publishing to the null sink, timing each event. */

import type { BenchContext } from "../context.js";
import type { RelayImpl, RelayJob } from "../jobs.js";
import type { PtoController } from "../pto-controllers.js";
import type { PtoNames } from "../pto-fixtures.js";
import { RELAY_POOL_MAX } from "../relay-setup.js";

export const PTO_LATENCY_POLL_MS = 250; // its README example's nextMessagesPollingIntervalInMs
/**
 * The replication listener's controller for the latency runs: bounded like its handler pool, so a
 * burst never queues thousands of messages (full concurrency re-sorts every in-flight LSN per ack).
 */
export const PTO_LATENCY_CONTROLLER: PtoController = "semaphore";

export interface LatencyJobSetup {
  impl: RelayImpl;
  url: string;
  pto: PtoNames | undefined;
  topicArn: string;
  /** Events the run produces: the child reports once it has published them all. */
  total: number;
}

export function latencyJob(
  ctx: BenchContext,
  { impl, url, pto, topicArn, total }: LatencyJobSetup,
): RelayJob {
  return {
    kind: "relay",
    impl,
    sink: "null",
    url,
    aws: ctx.stack.aws,
    topicArn,
    batchSize: impl === "ours" ? 100 : 50,
    expected: total,
    // Whatever is not published within the grace after the producer's last commit counts as not published.
    capMs: (ctx.sizes.latencySeconds + ctx.sizes.latencyGraceSeconds) * 1_000,
    listen: true,
    recordTimes: true,
    pollIntervalMs: impl === "ours" ? 1_000 : PTO_LATENCY_POLL_MS,
    poolMax: RELAY_POOL_MAX,
    pto,
    ...(impl === "pto-replication" ? { ptoController: PTO_LATENCY_CONTROLLER } : {}),
  };
}
