import { type LogEntry, type RaceCounts, TerminationRace, type TickFrame, type Workload } from "./race.js";
import type { StopSchedule } from "./stop-schedule.js";

/** Traffic through a fleet, one replica stopped at a chosen tick, run for a fixed number of ticks. */
export interface RaceScenario {
  readonly workload: Workload;
  readonly schedule: StopSchedule;
  readonly replicas: number;
  readonly requestsPerTick: number;
  /** The tick at which the platform decides to stop `pod-1`. */
  readonly stopAt: number;
  readonly ticks: number;
}

export interface RaceOutcome {
  readonly counts: RaceCounts;
  readonly log: readonly LogEntry[];
  readonly frames: readonly TickFrame[];
}

export function runRace(scenario: RaceScenario): RaceOutcome {
  const race = new TerminationRace(scenario.workload, scenario.replicas);
  for (let t = 0; t < scenario.ticks; t++) {
    if (t === scenario.stopAt) race.terminate("pod-1", scenario.schedule);
    race.tick(scenario.requestsPerTick);
  }
  return { counts: race.result, log: race.log, frames: race.frames };
}
