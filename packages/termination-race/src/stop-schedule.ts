/**
 * When each step of one replica's stop happens, in ticks after the platform decides to stop it.
 * Each platform orders the same steps differently; the simulator runs whichever it is given.
 */
export interface StopSchedule {
  /** The replica is off the endpoint list everywhere: no router sends it new requests. */
  readonly removeAfter: number;
  /** SIGTERM: the replica stops accepting; what it holds keeps running. */
  readonly sigtermAfter: number;
  /** SIGKILL: whatever still runs is cut. */
  readonly killAfter: number;
  /** The load balancer closes the replica's connections, cutting what they carry (ECS: end of draining). */
  readonly disconnectAfter?: number;
}

/** The source document's model: `propagation`, then `preStop` before SIGTERM, `grace` after it. */
export interface RaceConfig {
  readonly propagation: number;
  readonly preStop: number;
  readonly grace: number;
  readonly work: number;
}

/** The document's order: removal and the preStop wait start together; SIGKILL comes `grace` after SIGTERM. */
export function documentSchedule(config: RaceConfig): StopSchedule {
  return {
    removeAfter: config.propagation,
    sigtermAfter: config.preStop,
    killAfter: config.preStop + config.grace,
  };
}

/**
 * Kubernetes: on deletion the endpoint removal and the preStop hook start at once; SIGTERM follows
 * the hook; terminationGracePeriodSeconds counts from the deletion, so it includes the hook. A hook
 * still running when the grace expires gets SIGTERM then, and a one-off 2 s extension before SIGKILL.
 * (Kubernetes docs, "Pod Lifecycle: Termination of Pods".)
 */
export function kubernetesSchedule(ticks: {
  readonly propagation: number;
  readonly preStop: number;
  readonly terminationGracePeriod: number;
  /** The 2 s extension, in ticks. */
  readonly hookOverrunExtension: number;
}): StopSchedule {
  const hookOverruns = ticks.preStop >= ticks.terminationGracePeriod;
  return {
    removeAfter: ticks.propagation,
    sigtermAfter: hookOverruns ? ticks.terminationGracePeriod : ticks.preStop,
    killAfter: hookOverruns
      ? ticks.terminationGracePeriod + ticks.hookOverrunExtension
      : ticks.terminationGracePeriod,
  };
}

/**
 * ECS behind an Application Load Balancer: ECS deregisters the task's target first; the ALB stops
 * routing to it once the draining state has spread (`propagation`) and breaks the connections still
 * open when the deregistration delay ends; only then does ECS send the stop signal, and SIGKILL
 * `stopTimeout` later. (AWS docs: "Optimize load balancer connection draining parameters for Amazon
 * ECS", "Edit target group attributes for your Application Load Balancer: Deregistration delay",
 * ContainerDefinition `stopTimeout`.)
 */
export function ecsBehindAlbSchedule(ticks: {
  readonly propagation: number;
  readonly deregistrationDelay: number;
  readonly stopTimeout: number;
}): StopSchedule {
  return {
    removeAfter: ticks.propagation,
    disconnectAfter: ticks.deregistrationDelay,
    sigtermAfter: ticks.deregistrationDelay,
    killAfter: ticks.deregistrationDelay + ticks.stopTimeout,
  };
}

/**
 * An ECS task with no load balancer (the relay, the consumer): the stop signal comes at once and
 * stops the daemon's own intake (it claims and receives work itself), SIGKILL `stopTimeout` later.
 */
export function ecsWorkerSchedule(ticks: { readonly stopTimeout: number }): StopSchedule {
  return { removeAfter: 0, sigtermAfter: 0, killAfter: ticks.stopTimeout };
}
