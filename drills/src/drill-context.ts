import { type FaultClient, faultClientFor, type StackInfo } from "@outbox/devstack";
import type { DrillEnvironment } from "./drill-environment.js";

/** How big a drill run is: the demo's defaults are the source document's numbers. */
export interface DrillScale {
  /** Events in the stop drills' backlog (the document: 150). */
  readonly events: number;
  /** The relay's batch size in the stop drills (the document: 100). */
  readonly batchSize: number;
  /** How long the producer runs in the restart series. */
  readonly seriesDurationMs: number;
  /** Producer rate in the restart series. */
  readonly eventsPerSecond: number;
  /** Restarts of each daemon kind in the restart series (the issue: ten). */
  readonly restarts: number;
  /** Transactions each of the racing-producers drill's 32 producers runs. */
  readonly racingTransactions: number;
  /** How long the failover drill cuts the database, and takes the handlers' downstream away (issue #40: 60 s). */
  readonly outageMs: number;
}

export const fullScale: DrillScale = {
  events: 150,
  batchSize: 100,
  seriesDurationMs: 60_000,
  eventsPerSecond: 100,
  restarts: 10,
  racingTransactions: 20,
  outageMs: 60_000,
};

/** Small enough for the test suite, large enough for every expectation to be able to fail. */
export const testScale: DrillScale = {
  events: 150,
  batchSize: 100,
  seriesDurationMs: 12_000,
  eventsPerSecond: 50,
  restarts: 3,
  racingTransactions: 8,
  outageMs: 12_000,
};

export interface DrillContext {
  readonly stack: StackInfo;
  readonly faults: FaultClient;
  readonly scale: DrillScale;
  /** Seed of every random moment; printed so a run can be repeated. */
  readonly seed: number;
  /** Progress lines for a person watching (plain text, one event per call). */
  readonly progress: (message: string) => void;
  /** Told about each drill's environment as it starts, so a live board can watch its tables. */
  readonly watch?: (environment: DrillEnvironment) => void;
}

export function drillContext(
  stack: StackInfo,
  options: {
    scale: DrillScale;
    seed: number;
    progress: (message: string) => void;
    watch?: (environment: DrillEnvironment) => void;
  },
): DrillContext {
  const faults = faultClientFor(stack);
  if (!faults) {
    throw new Error(
      `the drills need fault injection to time their stops, which the ${stack.backend} backend lacks: run them with STACK=embedded`,
    );
  }
  return { stack, faults, ...options };
}
