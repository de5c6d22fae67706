/** From commit times and publish times to one latency run's figures. */

import type { JobResult } from "../child.js";
import type { RelayImpl } from "../jobs.js";
import { percentile } from "../measure.js";

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

/** Commit → publish ms of every event that was published, ascending; unpublished events are left out. */
export function commitToPublishMs(committedAt: ReadonlyMap<string, number>, result: JobResult): number[] {
  const published = new Map((result.times as [string, number][] | undefined) ?? []);
  return [...committedAt]
    .map(([id, at]) => (published.get(id) ?? Number.NaN) - at)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
}

export function latencyFigures(
  impl: RelayImpl,
  rate: number,
  latencies: readonly number[],
  result: JobResult,
): LatencyRun {
  const ms = (p: number) => Number(percentile(latencies, p).toFixed(2));
  return {
    impl,
    rate,
    events: latencies.length,
    p50: ms(50),
    p99: ms(99),
    max: ms(100),
    negative: latencies.filter((l) => l < 0).length,
    cpuSeconds: result.cpuSeconds,
    maxRssMiB: result.maxRssMiB,
  };
}
