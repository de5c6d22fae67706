import type { RaceSetup } from "./race-setup.js";

/*
 * The source document's preset buttons (preStop 0 / 2 / 4, grace 1 / 10), each labelled by what it
 * means for the setup it would change: the page's buttons and `pnpm simulate`'s grid say the same.
 */

export function preStopPreset(value: number, setup: RaceSetup): string {
  if (value === 0) return "0 (no wait)";
  return value < setup.propagation
    ? `${value} (shorter than the propagation)`
    : `${value} (covers the propagation)`;
}

/**
 * Counted from SIGTERM (the document's model, ECS's stopTimeout) a grace is measured against the
 * work; counted from the deletion (Kubernetes) it first has to outlive the preStop, then hold the work too.
 */
export function gracePreset(value: number, setup: RaceSetup): string {
  if (setup.platform !== "k8s") {
    return value < setup.work ? `${value} (shorter than the work)` : `${value} (covers the work)`;
  }
  if (value <= setup.preStop) return `${value} (within the preStop: SIGTERM comes at the grace)`;
  return value < setup.preStop + setup.work
    ? `${value} (shorter than the preStop plus the work)`
    : `${value} (covers the preStop and the work)`;
}
