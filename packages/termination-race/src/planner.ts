import { secondsText } from "./seconds-text.js";
import {
  type AppTiming,
  DEFAULT_TRAFFIC,
  type StopOutcome,
  simulateStop,
  type Traffic,
} from "./simulate-stop.js";
import {
  FARGATE_MAX_STOP_TIMEOUT_SECONDS,
  PLATFORM_DEFAULTS,
  type Platform,
  type StopSettings,
} from "./stop-settings.js";

export interface PlanInput extends AppTiming {
  readonly platform: Platform;
  /**
   * Slack between the app's own stop and SIGKILL: signal delivery, a busy event loop, the last log
   * lines leaving. Default 5 s, the margin the CDK stack uses for the relay and the consumer.
   */
  readonly marginMs?: number;
  /** The settings in use today; the platform's defaults when absent. */
  readonly given?: StopSettings;
  readonly traffic?: Traffic;
}

/** One recommended number and the one-line reason for it. */
export interface Recommendation {
  readonly setting: string;
  readonly seconds: number;
  readonly reason: string;
}

export interface Plan {
  readonly input: PlanInput;
  readonly recommended: StopSettings;
  readonly reasons: readonly Recommendation[];
  readonly warnings: readonly string[];
  readonly given: StopSettings;
  readonly givenIsDefault: boolean;
  readonly marginMs: number;
  readonly traffic: Traffic;
  readonly outcomes: { readonly given: StopOutcome; readonly recommended: StopOutcome };
}

export const DEFAULT_MARGIN_MS = 5_000;

function wholeSeconds(ms: number): number {
  return Math.ceil(ms / 1000);
}

/** The app must wait for its longest request after SIGTERM, or it gives up on it by itself. */
function appDrainMs(input: PlanInput): number {
  return Math.max(input.drainMs, input.longestRequestMs);
}

function drainReason(input: PlanInput): Recommendation[] {
  if (input.drainMs >= input.longestRequestMs) return [];
  return [
    {
      setting: "app drain timeout",
      seconds: wholeSeconds(input.longestRequestMs),
      reason: `the app gives up on work in flight ${secondsText(input.drainMs)} after SIGTERM, before its longest request (${secondsText(input.longestRequestMs)}) can finish`,
    },
  ];
}

type PlatformPlan = Pick<Plan, "recommended" | "reasons" | "warnings"> & {
  /** The app's drain the recommendation assumes (raised to the longest request where that matters). */
  readonly drainMs: number;
};

function kubernetesPlan(input: PlanInput, marginMs: number): PlatformPlan {
  const preStopSeconds = wholeSeconds(input.propagationMs);
  const drainSeconds = wholeSeconds(appDrainMs(input));
  const marginSeconds = wholeSeconds(marginMs);
  const terminationGracePeriodSeconds = preStopSeconds + drainSeconds + marginSeconds;
  return {
    recommended: { platform: "k8s", preStopSeconds, terminationGracePeriodSeconds },
    drainMs: appDrainMs(input),
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
    warnings: [],
  };
}

/** Behind an ALB every request has ended before SIGTERM, so the drain covers the app's other work only. */
function ecsPlan(input: PlanInput, marginMs: number): PlatformPlan {
  const deregistrationDelaySeconds = wholeSeconds(input.propagationMs + input.longestRequestMs);
  const drainSeconds = wholeSeconds(input.drainMs);
  const marginSeconds = wholeSeconds(marginMs);
  const stopTimeoutSeconds = drainSeconds + marginSeconds;
  const warnings =
    stopTimeoutSeconds > FARGATE_MAX_STOP_TIMEOUT_SECONDS
      ? [
          `stopTimeout ${stopTimeoutSeconds} s is above Fargate's maximum of ${FARGATE_MAX_STOP_TIMEOUT_SECONDS} s: shorten the app's drain`,
        ]
      : [];
  return {
    recommended: { platform: "ecs", deregistrationDelaySeconds, stopTimeoutSeconds },
    drainMs: input.drainMs,
    reasons: [
      {
        setting: "deregistration delay",
        seconds: deregistrationDelaySeconds,
        reason: `the ALB routes to the task until draining has spread (${secondsText(input.propagationMs)}), the last request it sent may run ${secondsText(input.longestRequestMs)}, and the ALB cuts what is still open when the delay ends; ECS sends SIGTERM only then, so no preStop is needed`,
      },
      {
        setting: "stopTimeout",
        seconds: stopTimeoutSeconds,
        reason: `SIGKILL must come after the app's own stop (drain ${drainSeconds} s) plus a ${marginSeconds} s margin`,
      },
    ],
    warnings,
  };
}

/**
 * The stop settings that drop nothing for this app on this platform, each with its reason, and the
 * simulator's verdict on them beside its verdict on the settings in use (or the platform defaults).
 */
export function plan(input: PlanInput): Plan {
  const marginMs = input.marginMs ?? DEFAULT_MARGIN_MS;
  const { drainMs, ...platformPlan } =
    input.platform === "k8s" ? kubernetesPlan(input, marginMs) : ecsPlan(input, marginMs);
  const given = input.given ?? PLATFORM_DEFAULTS[input.platform];
  const traffic = input.traffic ?? DEFAULT_TRAFFIC;
  return {
    input,
    ...platformPlan,
    given,
    givenIsDefault: input.given === undefined,
    marginMs,
    traffic,
    outcomes: {
      given: simulateStop(given, input, traffic),
      recommended: simulateStop(platformPlan.recommended, { ...input, drainMs }, traffic),
    },
  };
}
