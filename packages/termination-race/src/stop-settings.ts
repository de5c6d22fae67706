import {
  ecsBehindAlbSchedule,
  ecsWorkerSchedule,
  kubernetesSchedule,
  type StopSchedule,
} from "./stop-schedule.js";

export type Platform = "ecs" | "k8s";

/** The stop settings a user writes down, per platform, in the platform's own units (whole seconds). */
export type StopSettings =
  | {
      readonly platform: "k8s";
      /** A preStop hook that only waits (`sleep`). */
      readonly preStopSeconds: number;
      readonly terminationGracePeriodSeconds: number;
    }
  | {
      readonly platform: "ecs";
      /**
       * The target group's `deregistration_delay.timeout_seconds`. Absent: the task is in no target
       * group (a worker such as the relay or the consumer) and gets the stop signal at once.
       */
      readonly deregistrationDelaySeconds?: number;
      /** The container's `stopTimeout`. */
      readonly stopTimeoutSeconds: number;
    };

/** What each platform does when nothing is set: no preStop hook and a 30 s grace; a 300 s delay and a 30 s stopTimeout. */
export const PLATFORM_DEFAULTS: { readonly [P in Platform]: Extract<StopSettings, { platform: P }> } = {
  k8s: { platform: "k8s", preStopSeconds: 0, terminationGracePeriodSeconds: 30 },
  ecs: { platform: "ecs", deregistrationDelaySeconds: 300, stopTimeoutSeconds: 30 },
};

/** Fargate refuses a container `stopTimeout` above 120 s. */
export const FARGATE_MAX_STOP_TIMEOUT_SECONDS = 120;

/** Kubernetes' one-off extension when a preStop hook outlives the grace period. */
export const KUBERNETES_HOOK_OVERRUN_EXTENSION_MS = 2_000;

/** One tick of the planner's logical clock: fine enough for propagation and request times. */
export const TICK_MS = 100;

/** A duration in ticks, rounded up: a part of a tick still takes the tick. */
export function ticks(ms: number): number {
  return Math.ceil(ms / TICK_MS);
}

/** The platform's order of the stop for these settings, on the planner's clock. */
export function scheduleFor(settings: StopSettings, propagationMs: number): StopSchedule {
  if (settings.platform === "k8s") {
    return kubernetesSchedule({
      propagation: ticks(propagationMs),
      preStop: ticks(settings.preStopSeconds * 1000),
      terminationGracePeriod: ticks(settings.terminationGracePeriodSeconds * 1000),
      hookOverrunExtension: ticks(KUBERNETES_HOOK_OVERRUN_EXTENSION_MS),
    });
  }
  if (settings.deregistrationDelaySeconds === undefined) {
    return ecsWorkerSchedule({ stopTimeout: ticks(settings.stopTimeoutSeconds * 1000) });
  }
  return ecsBehindAlbSchedule({
    propagation: ticks(propagationMs),
    deregistrationDelay: ticks(settings.deregistrationDelaySeconds * 1000),
    stopTimeout: ticks(settings.stopTimeoutSeconds * 1000),
  });
}

/** How long the app has between SIGTERM and SIGKILL under these settings. */
export function sigtermToKillMs(settings: StopSettings): number {
  const schedule = scheduleFor(settings, 0);
  return (schedule.killAfter - schedule.sigtermAfter) * TICK_MS;
}

export function describeSettings(settings: StopSettings): string {
  if (settings.platform === "k8s") {
    return `preStop ${settings.preStopSeconds} s, terminationGracePeriodSeconds ${settings.terminationGracePeriodSeconds}`;
  }
  return settings.deregistrationDelaySeconds === undefined
    ? `stopTimeout ${settings.stopTimeoutSeconds} s (no load balancer)`
    : `deregistration delay ${settings.deregistrationDelaySeconds} s, stopTimeout ${settings.stopTimeoutSeconds} s`;
}
