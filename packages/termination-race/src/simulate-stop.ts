import type { RaceCounts } from "./race.js";
import { runRace } from "./run-race.js";
import { ecsWorkerSchedule } from "./stop-schedule.js";
import { type StopSettings, scheduleFor, sigtermToKillMs, ticks } from "./stop-settings.js";

/** What the planner knows of the app and its surroundings, in milliseconds. */
export interface AppTiming {
  /** How long the endpoint removal takes to reach every router (kube-proxy, the ALB's nodes). */
  readonly propagationMs: number;
  /** The longest request the app serves. */
  readonly longestRequestMs: number;
  /** The app's whole stop after SIGTERM: the longest it waits for work in flight, plus its exit. */
  readonly drainMs: number;
}

export interface Traffic {
  readonly replicas: number;
  readonly requestsPerTick: number;
}

/** Two replicas (one stops, one keeps serving) and 20 requests per second. */
export const DEFAULT_TRAFFIC: Traffic = { replicas: 2, requestsPerTick: 2 };

export interface StopOutcome {
  /** Requests through the fleet while one replica stops under these settings. */
  readonly requests: RaceCounts;
  /**
   * The app's own stop when it takes its whole drain budget: 1 when SIGKILL lands before the drain
   * ends, 0 when the app always gets to exit by itself.
   */
  readonly drainsCut: number;
}

/**
 * Work routed in the tick before SIGTERM has already run one tick, so it is given one tick more:
 * the longest request (or drain) then still has its whole length left when SIGTERM lands.
 */
function workTicks(ms: number): number {
  return ticks(ms) + 1;
}

function requestsThrough(settings: StopSettings, app: AppTiming, traffic: Traffic): RaceCounts {
  const schedule = scheduleFor(settings, app.propagationMs);
  const work = workTicks(app.longestRequestMs);
  const lastEvent = Math.max(schedule.removeAfter, schedule.killAfter, schedule.disconnectAfter ?? 0);
  return runRace({
    workload: { work, drain: ticks(app.drainMs) },
    schedule,
    replicas: traffic.replicas,
    requestsPerTick: traffic.requestsPerTick,
    stopAt: work,
    ticks: work + lastEvent + work + 1,
  }).counts;
}

/**
 * A stop that takes the app's whole drain budget, SIGTERM at once and SIGKILL `sigtermToKillMs`
 * later: the check for a daemon with no load balancer (the relay, the consumer), and for the part
 * of any app's stop that is not requests. `drainsCut` is 1 when SIGKILL lands before the drain ends.
 */
export function simulateDrainWindow(window: {
  readonly sigtermToKillMs: number;
  readonly drainMs: number;
}): RaceCounts {
  const schedule = ecsWorkerSchedule({ stopTimeout: ticks(window.sigtermToKillMs) });
  const work = workTicks(window.drainMs);
  return runRace({
    workload: { work },
    schedule,
    // One request per replica per tick: the stopping one holds work that began the tick before SIGTERM.
    replicas: 2,
    requestsPerTick: 2,
    stopAt: work,
    ticks: work + schedule.killAfter + work + 1,
  }).counts;
}

/** Runs one replica's stop under `settings` through the simulator: the requests, then the app's own drain. */
export function simulateStop(
  settings: StopSettings,
  app: AppTiming,
  traffic: Traffic = DEFAULT_TRAFFIC,
): StopOutcome {
  const window = { sigtermToKillMs: sigtermToKillMs(settings), drainMs: app.drainMs };
  return {
    requests: requestsThrough(settings, app, traffic),
    drainsCut: simulateDrainWindow(window).drainsCut,
  };
}
