import { describeDrops } from "./race-text.js";
import { secondsText } from "./seconds-text.js";
import {
  type AppTiming,
  DEFAULT_TRAFFIC,
  type StopOutcome,
  simulateDrainWindow,
  simulateStop,
  type Traffic,
} from "./simulate-stop.js";
import {
  FARGATE_MAX_STOP_TIMEOUT_SECONDS,
  PLATFORM_DEFAULTS,
  type Platform,
  type StopSettings,
  sigtermToKillMs,
} from "./stop-settings.js";

/**
 * `service`: replicas behind a load balancer (the api); `worker`: a daemon no load balancer routes to,
 * which takes its own work (the relay claims outbox rows, the consumer receives from SQS). A worker
 * has no endpoint to leave: only its drain and the time SIGKILL leaves it matter.
 */
export type PlanMode = "service" | "worker";

interface CommonInput {
  readonly platform: Platform;
  /**
   * Slack between the app's own stop and SIGKILL: signal delivery, a busy event loop, the last log
   * lines leaving. Default 5 s, the margin the CDK stack uses for the relay and the consumer.
   */
  readonly marginMs?: number;
  /** The settings in use today; the platform's defaults when absent. */
  readonly given?: StopSettings;
}

export interface ServicePlanInput extends CommonInput, AppTiming {
  readonly mode?: "service";
  readonly traffic?: Traffic;
}

export interface WorkerPlanInput extends CommonInput {
  readonly mode: "worker";
  /** The daemon's whole stop after SIGTERM: its drain timeout plus its exit. */
  readonly drainMs: number;
}

export type PlanInput = ServicePlanInput | WorkerPlanInput;

/** One recommended number and the one-line reason for it. */
export interface Recommendation {
  readonly setting: string;
  readonly seconds: number;
  readonly reason: string;
}

export interface Plan {
  readonly input: PlanInput;
  readonly mode: PlanMode;
  readonly recommended: StopSettings;
  readonly reasons: readonly Recommendation[];
  /**
   * Why the recommendation is no answer, one line each: the platform refuses it (Fargate's
   * stopTimeout), or the simulator still loses work with it (a single replica). Empty when it holds.
   */
  readonly problems: readonly string[];
  readonly given: StopSettings;
  readonly givenIsDefault: boolean;
  readonly marginMs: number;
  /** The traffic the service's stop was simulated under; absent for a worker. */
  readonly traffic?: Traffic;
  readonly outcomes: { readonly given: StopOutcome; readonly recommended: StopOutcome };
}

export const DEFAULT_MARGIN_MS = 5_000;

function wholeSeconds(ms: number): number {
  return Math.ceil(ms / 1000);
}

/** The app must wait for its longest request after SIGTERM, or it gives up on it by itself. */
function appDrainMs(input: ServicePlanInput): number {
  return Math.max(input.drainMs, input.longestRequestMs);
}

function drainReason(input: ServicePlanInput): Recommendation[] {
  if (input.drainMs >= input.longestRequestMs) return [];
  return [
    {
      setting: "app drain timeout",
      seconds: wholeSeconds(input.longestRequestMs),
      reason: `the app gives up on work in flight ${secondsText(input.drainMs)} after SIGTERM, before its longest request (${secondsText(input.longestRequestMs)}) can finish`,
    },
  ];
}

type PlatformPlan = Pick<Plan, "recommended" | "reasons">;

function kubernetesPlan(input: ServicePlanInput, marginMs: number): PlatformPlan {
  const preStopSeconds = wholeSeconds(input.propagationMs);
  const drainSeconds = wholeSeconds(appDrainMs(input));
  const marginSeconds = wholeSeconds(marginMs);
  const terminationGracePeriodSeconds = preStopSeconds + drainSeconds + marginSeconds;
  return {
    recommended: { platform: "k8s", preStopSeconds, terminationGracePeriodSeconds },
    reasons: [
      {
        setting: "preStop (sleep)",
        seconds: preStopSeconds,
        reason: `SIGTERM must wait until the endpoint removal has reached every proxy (propagation ${secondsText(input.propagationMs)}); the app keeps serving meanwhile`,
      },
      ...drainReason(input),
      {
        setting: "terminationGracePeriodSeconds",
        seconds: terminationGracePeriodSeconds,
        reason: `it counts from the deletion, so it holds the preStop wait (${preStopSeconds} s), the app's drain (${drainSeconds} s) and a ${marginSeconds} s margin before SIGKILL`,
      },
    ],
  };
}

function stopTimeoutReason(drainMs: number, marginMs: number): Recommendation {
  const drainSeconds = wholeSeconds(drainMs);
  const marginSeconds = wholeSeconds(marginMs);
  return {
    setting: "stopTimeout",
    seconds: drainSeconds + marginSeconds,
    reason: `SIGKILL must come after the app's own stop (drain ${drainSeconds} s) plus a ${marginSeconds} s margin`,
  };
}

/** Behind an ALB every request has ended before SIGTERM, so the drain covers the app's other work only. */
function ecsPlan(input: ServicePlanInput, marginMs: number): PlatformPlan {
  const deregistrationDelaySeconds = wholeSeconds(input.propagationMs + input.longestRequestMs);
  const stopTimeout = stopTimeoutReason(input.drainMs, marginMs);
  return {
    recommended: { platform: "ecs", deregistrationDelaySeconds, stopTimeoutSeconds: stopTimeout.seconds },
    reasons: [
      {
        setting: "deregistration delay",
        seconds: deregistrationDelaySeconds,
        reason: `the ALB routes to the task until draining has spread (${secondsText(input.propagationMs)}), the last request it sent may run ${secondsText(input.longestRequestMs)}, and the ALB cuts what is still open when the delay ends; ECS sends SIGTERM only then, so no preStop is needed`,
      },
      stopTimeout,
    ],
  };
}

/** No load balancer: SIGTERM at once (no preStop to wait in), SIGKILL after the drain and the margin. */
function workerPlan(input: WorkerPlanInput, marginMs: number): PlatformPlan {
  const stopTimeout = stopTimeoutReason(input.drainMs, marginMs);
  if (input.platform === "ecs") {
    return {
      recommended: { platform: "ecs", stopTimeoutSeconds: stopTimeout.seconds },
      reasons: [stopTimeout],
    };
  }
  return {
    recommended: { platform: "k8s", preStopSeconds: 0, terminationGracePeriodSeconds: stopTimeout.seconds },
    reasons: [
      {
        setting: "preStop (sleep)",
        seconds: 0,
        reason:
          "no Service routes to the pod, so there is no endpoint removal to wait out; a wait would only eat into the drain",
      },
      { ...stopTimeout, setting: "terminationGracePeriodSeconds" },
    ],
  };
}

/** The settings a worker runs with when none are given: the platform's, without a target group on ECS. */
function workerDefaults(platform: Platform): StopSettings {
  return platform === "k8s"
    ? PLATFORM_DEFAULTS.k8s
    : { platform: "ecs", stopTimeoutSeconds: PLATFORM_DEFAULTS.ecs.stopTimeoutSeconds };
}

function fargateProblem(recommended: StopSettings, marginMs: number): string[] {
  if (recommended.platform !== "ecs" || recommended.stopTimeoutSeconds <= FARGATE_MAX_STOP_TIMEOUT_SECONDS) {
    return [];
  }
  const longestDrain = FARGATE_MAX_STOP_TIMEOUT_SECONDS - wholeSeconds(marginMs);
  return [
    `the stop needs a stopTimeout of ${recommended.stopTimeoutSeconds} s, above Fargate's maximum of ${FARGATE_MAX_STOP_TIMEOUT_SECONDS} s: shorten the app's drain to ${longestDrain} s or less`,
  ];
}

function lossProblem(outcome: StopOutcome, traffic: Traffic | undefined): string[] {
  const { requests } = outcome;
  if (requests.dropped === 0 && outcome.drainsCut === 0) return [];
  if (traffic?.replicas === 1 && requests.unroutable > 0) {
    return [
      "with 1 replica the endpoint list is empty while it stops, whatever the settings: run at least 2",
    ];
  }
  return [
    `even the recommended settings lose work (${describeDrops(requests)}, ${outcome.drainsCut} drains cut)`,
  ];
}

/**
 * The stop settings that drop nothing for this app on this platform, each with its reason, and the
 * simulator's verdict on them beside its verdict on the settings in use (or the platform defaults).
 */
export function plan(input: PlanInput): Plan {
  const marginMs = input.marginMs ?? DEFAULT_MARGIN_MS;
  if (input.mode === "worker") {
    const platformPlan = workerPlan(input, marginMs);
    const given = input.given ?? workerDefaults(input.platform);
    const drainWindow = (settings: StopSettings): StopOutcome => {
      const requests = simulateDrainWindow({
        sigtermToKillMs: sigtermToKillMs(settings),
        drainMs: input.drainMs,
      });
      return { requests, drainsCut: requests.drainsCut };
    };
    const outcomes = { given: drainWindow(given), recommended: drainWindow(platformPlan.recommended) };
    return {
      input,
      mode: "worker",
      ...platformPlan,
      problems: [
        ...fargateProblem(platformPlan.recommended, marginMs),
        ...lossProblem(outcomes.recommended, undefined),
      ],
      given,
      givenIsDefault: input.given === undefined,
      marginMs,
      outcomes,
    };
  }
  const platformPlan = input.platform === "k8s" ? kubernetesPlan(input, marginMs) : ecsPlan(input, marginMs);
  const given = input.given ?? PLATFORM_DEFAULTS[input.platform];
  const traffic = input.traffic ?? DEFAULT_TRAFFIC;
  // On Kubernetes the app's drain is raised to its longest request where that was too short.
  const drainMs = input.platform === "k8s" ? appDrainMs(input) : input.drainMs;
  const outcomes = {
    given: simulateStop(given, input, traffic),
    recommended: simulateStop(platformPlan.recommended, { ...input, drainMs }, traffic),
  };
  return {
    input,
    mode: "service",
    ...platformPlan,
    problems: [
      ...fargateProblem(platformPlan.recommended, marginMs),
      ...lossProblem(outcomes.recommended, traffic),
    ],
    given,
    givenIsDefault: input.given === undefined,
    marginMs,
    traffic,
    outcomes,
  };
}
