import type { SetupRun } from "./race-setup.js";

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The ticks in which some replica was still routed to while it refused: the accident window. */
function refusingTicks(run: SetupRun): number {
  return run.frames.filter((frame) => frame.replicas.some((replica) => replica.refused > 0)).length;
}

function refusedCause(run: SetupRun): string {
  const { setup, schedule, stopAt } = run;
  const hookOverruns = setup.platform === "k8s" && setup.preStop >= setup.grace;
  const wait = setup.platform === "ecs" ? "deregistration delay" : "preStop";
  const remedy = hookOverruns
    ? `the preStop ${setup.preStop} outlives the grace ${setup.grace}, so SIGTERM comes at the grace: the grace must be longer than the preStop`
    : `a ${wait} of at least the propagation, ${setup.propagation}, closes that window`;
  return (
    `${run.counts.refused} refused in ${plural(refusingTicks(run), "tick")}: pod-1 stayed on the target list from ` +
    `SIGTERM at t=${stopAt + schedule.sigtermAfter} to its removal at t=${stopAt + schedule.removeAfter} ` +
    `(${remedy})`
  );
}

function unroutableCause(run: SetupRun): string {
  const ticks = run.frames.filter((frame) => frame.unroutable > 0).length;
  return `${run.counts.unroutable} with no endpoint left for ${plural(ticks, "tick")} (with ${plural(run.setup.replicas, "replica")} the list empties while one stops)`;
}

function sigkillCause(run: SetupRun): string {
  const { setup, schedule } = run;
  const window = schedule.killAfter - schedule.sigtermAfter;
  const why = {
    document: `the grace ${setup.grace} counts from SIGTERM`,
    k8s:
      setup.preStop >= setup.grace
        ? `the preStop ${setup.preStop} outlives the grace ${setup.grace}: SIGTERM at the grace, SIGKILL ${window} later`
        : `the grace ${setup.grace} counts from the deletion and holds the preStop ${setup.preStop}: ${window} left after SIGTERM`,
    ecs: `stopTimeout ${setup.grace}`,
  }[setup.platform];
  return `${run.counts.cutBySigkill} cut by SIGKILL (${why}, the work takes ${setup.work})`;
}

function loadBalancerCause(run: SetupRun): string {
  const { setup } = run;
  return (
    `${run.counts.cutByLoadBalancer} cut by the load balancer (the deregistration delay ${setup.preStop} is shorter than ` +
    `the propagation plus the work, ${setup.propagation} + ${setup.work}: requests routed until the removal still run when it closes the connections)`
  );
}

/**
 * What happened, in one line: the drops and, for each cause that occurred, why the settings let it
 * happen; the counterpart of the source document's line under its demo.
 */
export function explainRun(run: SetupRun): string {
  const { counts } = run;
  if (counts.dropped === 0) {
    return `0 dropped, ${counts.served} served: the replica left the target list before SIGTERM, and its work in flight ended before SIGKILL`;
  }
  const causes = [
    counts.refused > 0 ? refusedCause(run) : undefined,
    counts.unroutable > 0 ? unroutableCause(run) : undefined,
    counts.cutBySigkill > 0 ? sigkillCause(run) : undefined,
    counts.cutByLoadBalancer > 0 ? loadBalancerCause(run) : undefined,
  ].filter((cause) => cause !== undefined);
  return `${counts.dropped} dropped, ${counts.served} served: ${causes.join("; ")}`;
}
