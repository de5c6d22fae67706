import type { LocalStack } from "@outbox/devstack";
import type { Summary } from "./measure.js";
import { PTO_CONTROLLERS, type PtoController } from "./pto-controllers.js";

export interface Sizes {
  relayEvents: number;
  /** A peer run stops here and reports the rate so far (its polling mode would take minutes). */
  relayCapMs: number;
  ourBatchSize: number;
  ptoBatchSizes: number[];
  /** pg-transactional-outbox replication controllers to try; the fastest is measured. */
  ptoControllers: readonly PtoController[];
  /** Backlog our relay drains when SNS answers each call late (relay-latency-sns). */
  snsLatencyEvents: number;
  latencyRates: number[];
  latencySeconds: number;
  /** How long after the producer's last commit a relay still has to publish: later counts as never. */
  latencyGraceSeconds: number;
  consumerMessages: number;
  /** At concurrency 1 every receive returns one message per 10 ms tick: fewer messages. */
  consumerMessagesAtOne: number;
  concurrencies: number[];
  stopEvents: number;
  stopMessages: number;
  stopAfterMs: number;
  /**
   * A subject still alive this long after SIGTERM is killed and reported as such (full: ECS's
   * default stopTimeout).
   */
  stopKillAfterMs: number;
  /**
   * The relay restart after a stop runs this long at most. Full: long enough for a peer's locks on
   * the rows it held at the stop (pg-transactional-outbox: 15 s) to expire and those rows to go
   * again. What any restart re-sends is also counted at the exit (StopRun.unmarkedPublished).
   */
  stopRestartCapMs: number;
  replicas: number[];
  scaleEvents: number;
  scaleMessages: number;
  /** autocannon's run against POST /photos, per side and run. */
  apiSeconds: number;
  /** Unmeasured load before it: the first requests compile code and open the pool's connections. */
  apiWarmUpSeconds: number;
  /** Published outbox rows retained at each step of the growth scenario; its inbox uses the first and last. */
  growthRows: number[];
  /** Pending backlog the relay drains at each growth step. */
  growthBacklog: number;
  /** Messages the consumer handles at each inbox size of the growth scenario. */
  growthMessages: number;
  /**
   * Runs per growth step at most, whatever `--runs` says: each run is a fresh backlog of
   * `growthBacklog` events, and the scenario has to fit the whole bench's time budget.
   */
  growthRuns: number;
  /** Transactions of one event the enqueue scenario times with one producer, per side and run. */
  enqueueTransactions: number;
  /** Transactions each of its 16 producers on 4 keys runs, per side and run. */
  enqueueContendedPerProducer: number;
}

export const FULL: Sizes = {
  relayEvents: 50_000,
  relayCapMs: 6_000,
  ourBatchSize: 500,
  ptoBatchSizes: [10, 50, 200],
  ptoControllers: PTO_CONTROLLERS,
  snsLatencyEvents: 30_000,
  latencyRates: [500, 2_000],
  latencySeconds: 10,
  latencyGraceSeconds: 10,
  consumerMessages: 6_000,
  consumerMessagesAtOne: 500,
  concurrencies: [1, 10, 50],
  stopEvents: 10_000,
  stopMessages: 10_000,
  stopAfterMs: 2_000,
  stopKillAfterMs: 30_000,
  stopRestartCapMs: 30_000,
  replicas: [1, 2, 4],
  scaleEvents: 50_000,
  scaleMessages: 10_000,
  apiSeconds: 15,
  apiWarmUpSeconds: 3,
  growthRows: [0, 1_000_000, 5_000_000],
  growthBacklog: 100_000,
  growthMessages: 2_000,
  growthRuns: 1,
  enqueueTransactions: 1_000,
  enqueueContendedPerProducer: 100,
};

export const QUICK: Sizes = {
  relayEvents: 5_000,
  relayCapMs: 2_000,
  ourBatchSize: 500,
  ptoBatchSizes: [50],
  // The two fastest in every full run so far (docs/benchmarks.md, relay-tuning).
  ptoControllers: ["semaphore", "multi"],
  snsLatencyEvents: 10_000,
  latencyRates: [500, 2_000],
  latencySeconds: 2,
  latencyGraceSeconds: 3,
  consumerMessages: 1_000,
  consumerMessagesAtOne: 100,
  concurrencies: [10, 50],
  stopEvents: 3_000,
  stopMessages: 1_000,
  stopAfterMs: 700,
  stopKillAfterMs: 10_000,
  stopRestartCapMs: 10_000,
  replicas: [1, 2],
  scaleEvents: 5_000,
  scaleMessages: 1_000,
  apiSeconds: 4,
  apiWarmUpSeconds: 2,
  growthRows: [0, 50_000, 200_000],
  growthBacklog: 10_000,
  growthMessages: 500,
  growthRuns: 1,
  enqueueTransactions: 400,
  enqueueContendedPerProducer: 40,
};

/** Tiny sizes for the smoke tests: every code path, no figures worth reading. */
export const SMOKE: Sizes = {
  ...QUICK,
  relayEvents: 300,
  relayCapMs: 3_000,
  ptoControllers: ["mutex", "full"],
  snsLatencyEvents: 300,
  latencyRates: [200],
  latencySeconds: 0.5,
  latencyGraceSeconds: 3,
  consumerMessages: 60,
  consumerMessagesAtOne: 10,
  concurrencies: [1, 10],
  stopEvents: 500,
  stopMessages: 100,
  stopAfterMs: 300,
  replicas: [1, 2],
  scaleEvents: 400,
  scaleMessages: 60,
  apiSeconds: 1,
  apiWarmUpSeconds: 1,
  growthRows: [0, 2_000],
  growthBacklog: 300,
  growthMessages: 60,
  growthRuns: 1,
  enqueueTransactions: 40,
  enqueueContendedPerProducer: 4,
};

export type ScenarioName =
  | "relay"
  | "relay-latency-sns"
  | "latency"
  | "consumer"
  | "stop"
  | "scale"
  | "api"
  | "growth"
  | "enqueue";
export const SCENARIOS: readonly ScenarioName[] = [
  "relay",
  "relay-latency-sns",
  "latency",
  "consumer",
  "stop",
  "scale",
  "api",
  "growth",
  "enqueue",
];

/** One line of the Markdown table: ours against one peer on one metric. */
export interface Row {
  scenario: string;
  metric: string;
  /** "higher" when more is better (throughput), "lower" for latency, CPU, time. */
  better: "higher" | "lower";
  ours: Summary;
  peer?: { name: string; summary: Summary };
  note?: string;
}

export interface BenchContext {
  stack: LocalStack;
  postmasterPid: number;
  sizes: Sizes;
  runs: number;
  log: (message: string) => void;
  rows: Row[];
  /** Every run's figures, by scenario. */
  raw: Record<string, unknown[]>;
  record(scenario: string, figures: Record<string, unknown>): void;
}
