import { DEMO } from "./demo.js";
import { type Plan, plan } from "./planner.js";
import { type RaceOutcome, runRace } from "./run-race.js";
import {
  documentSchedule,
  ecsBehindAlbSchedule,
  kubernetesSchedule,
  type StopSchedule,
} from "./stop-schedule.js";
import { KUBERNETES_HOOK_OVERRUN_EXTENSION_MS, type Platform } from "./stop-settings.js";

/**
 * Whose order of the stop a run follows: the source document's own model, or a platform's. The
 * document counts the grace from SIGTERM, which is how its demo shows a grace shorter than the work
 * cutting requests in flight; Kubernetes counts it from the deletion (the document lists that as
 * one of its simplifications).
 */
export type RacePlatform = "document" | Platform;

/**
 * The planner's clock maps settings in whole seconds onto its own ticks; the playground counts in
 * the document's ticks. Reading one tick as one second lets `recommendFor` hand the planner the
 * same numbers the page shows.
 */
const TICK_AS_MS = 1000;

/** Each order's name and, in one sentence, what it does; the page shows them beside its choice. */
export const RACE_PLATFORMS: Readonly<
  Record<RacePlatform, { readonly name: string; readonly explanation: string }>
> = {
  document: {
    name: "the source document's model",
    explanation:
      "SIGKILL comes the grace after SIGTERM, however long the preStop, so a grace shorter than the work cuts the requests in flight.",
  },
  k8s: {
    name: "Kubernetes",
    explanation: `terminationGracePeriod counts from the deletion and holds the preStop, so a preStop that outlives it gets SIGTERM at the grace and SIGKILL ${KUBERNETES_HOOK_OVERRUN_EXTENSION_MS / TICK_AS_MS} ticks later.`,
  },
  ecs: {
    name: "ECS behind an ALB",
    explanation:
      "the deregistration delay holds SIGTERM back and ends with the ALB closing the connections; SIGKILL comes the stopTimeout after SIGTERM.",
  },
};

/**
 * One run of the race to play with, on the source document's logical clock (ticks): the fleet, the
 * traffic, and one replica's stop in one order. `pnpm simulate` and its page take exactly these.
 * `preStop` and `grace` are the order's two numbers: in the document's model the preStop wait and
 * the grace after SIGTERM; on k8s the preStop sleep and terminationGracePeriodSeconds (counted from
 * the deletion, so it holds the preStop); on ecs the target group's deregistration delay and the
 * container's stopTimeout.
 */
export interface RaceSetup {
  readonly platform: RacePlatform;
  readonly propagation: number;
  readonly work: number;
  /** Requests per tick. */
  readonly rate: number;
  readonly replicas: number;
  readonly preStop: number;
  readonly grace: number;
}

export type SetupField = Exclude<keyof RaceSetup, "platform">;

/** Each number's bounds and what it is called, per platform where the platform names it. */
export const SETUP_FIELDS: Readonly<
  Record<
    SetupField,
    {
      readonly min: number;
      readonly max: number;
      readonly label: string;
      readonly document?: string;
      readonly ecs?: string;
    }
  >
> = {
  propagation: { min: 0, max: 60, label: "propagation (ticks until the removal reaches every router)" },
  work: { min: 1, max: 30, label: "work (ticks one request runs)" },
  rate: { min: 1, max: 20, label: "requests per tick" },
  replicas: { min: 1, max: 8, label: "replicas" },
  preStop: { min: 0, max: 120, label: "preStop (ticks before SIGTERM)", ecs: "deregistration delay (ticks)" },
  grace: {
    min: 0,
    max: 120,
    label: "terminationGracePeriod (ticks from the deletion to SIGKILL)",
    document: "grace (ticks from SIGTERM to SIGKILL)",
    ecs: "stopTimeout (ticks from SIGTERM to SIGKILL)",
  },
};

/** The source document's demo, headline case: preStop 0, grace 10 (48 served, 8 dropped). */
export const DEFAULT_SETUP: RaceSetup = {
  platform: "k8s",
  propagation: DEMO.propagation,
  work: DEMO.work,
  rate: DEMO.requestsPerTick,
  replicas: DEMO.replicas,
  preStop: 0,
  grace: 10,
};

/** The first number of `setup` outside its bounds, as one readable line; undefined when all fit. */
export function setupProblem(setup: RaceSetup): string | undefined {
  if (!Object.hasOwn(RACE_PLATFORMS, setup.platform)) {
    return `platform must be k8s, document or ecs, got ${JSON.stringify(setup.platform)}`;
  }
  for (const [field, bounds] of Object.entries(SETUP_FIELDS) as [
    SetupField,
    (typeof SETUP_FIELDS)[SetupField],
  ][]) {
    const value = setup[field];
    if (!Number.isInteger(value) || value < bounds.min || value > bounds.max) {
      return `${field} must be a whole number from ${bounds.min} to ${bounds.max}, got ${value}`;
    }
  }
  return undefined;
}

export function scheduleOf(setup: RaceSetup): StopSchedule {
  if (setup.platform === "document") return documentSchedule(setup);
  if (setup.platform === "k8s") {
    return kubernetesSchedule({
      propagation: setup.propagation,
      preStop: setup.preStop,
      terminationGracePeriod: setup.grace,
      hookOverrunExtension: KUBERNETES_HOOK_OVERRUN_EXTENSION_MS / TICK_AS_MS,
    });
  }
  return ecsBehindAlbSchedule({
    propagation: setup.propagation,
    deregistrationDelay: setup.preStop,
    stopTimeout: setup.grace,
  });
}

export interface SetupRun extends RaceOutcome {
  readonly setup: RaceSetup;
  readonly schedule: StopSchedule;
  readonly stopAt: number;
  readonly ticks: number;
}

/**
 * Runs `setup` as the document's demo does: pod-1 stopped at t=1 under steady traffic, for 16 ticks
 * or, when the stop takes longer, until it is over and the last request routed to it had time to end.
 */
export function runSetup(setup: RaceSetup): SetupRun {
  const schedule = scheduleOf(setup);
  const stopAt = DEMO.stopAt;
  const stopEnds = Math.max(
    schedule.removeAfter,
    Math.min(schedule.killAfter, schedule.sigtermAfter + setup.work),
    schedule.disconnectAfter ?? 0,
  );
  const ticks = Math.max(DEMO.ticks, stopAt + stopEnds + setup.work + 1);
  const outcome = runRace({
    workload: { work: setup.work },
    schedule,
    replicas: setup.replicas,
    requestsPerTick: setup.rate,
    stopAt,
    ticks,
  });
  return { setup, schedule, stopAt, ticks, ...outcome };
}

/**
 * `pnpm plan`'s answer for this app, one tick read as one second: propagation and work as its
 * propagation and longest request, the work as the whole drain (the app waits for its requests).
 * The document's model gets Kubernetes' plan: the same stop, its grace counted differently.
 */
export function planFor(setup: RaceSetup): Plan {
  return plan({
    platform: setup.platform === "ecs" ? "ecs" : "k8s",
    propagationMs: setup.propagation * TICK_AS_MS,
    longestRequestMs: setup.work * TICK_AS_MS,
    drainMs: setup.work * TICK_AS_MS,
    traffic: { replicas: setup.replicas, requestsPerTick: setup.rate },
  });
}

/**
 * The planner's answer for `setup`, and `setup` with its preStop and grace (or deregistration delay
 * and stopTimeout). In the document's model the grace is what Kubernetes' grace leaves after the preStop.
 */
export function recommendFor(setup: RaceSetup): { readonly plan: Plan; readonly setup: RaceSetup } {
  const answer = planFor(setup);
  const { recommended } = answer;
  const applied =
    recommended.platform === "k8s"
      ? {
          ...setup,
          preStop: recommended.preStopSeconds,
          grace:
            setup.platform === "document"
              ? recommended.terminationGracePeriodSeconds - recommended.preStopSeconds
              : recommended.terminationGracePeriodSeconds,
        }
      : {
          ...setup,
          preStop: recommended.deregistrationDelaySeconds ?? 0,
          grace: recommended.stopTimeoutSeconds,
        };
  return { plan: answer, setup: applied };
}
