import { type RaceOutcome, runRace } from "./run-race.js";
import { documentSchedule } from "./stop-schedule.js";

/**
 * The source document's demo: propagation 4, work 3 ticks, 4 requests per tick, 2 replicas, pod-1
 * stopped at t=1, 16 ticks; preStop 0 (no wait), 2 (shorter than the propagation), 4 (covers it);
 * grace 1 (shorter than the work), 10 (enough).
 */
export const DEMO = {
  propagation: 4,
  work: 3,
  requestsPerTick: 4,
  replicas: 2,
  stopAt: 1,
  ticks: 16,
  preStops: [0, 2, 4],
  graces: [1, 10],
} as const;

export interface DemoCell extends RaceOutcome {
  readonly preStop: number;
  readonly grace: number;
}

export function runDemoCell(preStop: number, grace: number): DemoCell {
  const { propagation, work } = DEMO;
  const outcome = runRace({
    workload: { work },
    schedule: documentSchedule({ propagation, preStop, grace, work }),
    replicas: DEMO.replicas,
    requestsPerTick: DEMO.requestsPerTick,
    stopAt: DEMO.stopAt,
    ticks: DEMO.ticks,
  });
  return { preStop, grace, ...outcome };
}

/** Every preStop × grace of the demo, row by row. */
export function demoGrid(): DemoCell[] {
  return DEMO.preStops.flatMap((preStop) => DEMO.graces.map((grace) => runDemoCell(preStop, grace)));
}
