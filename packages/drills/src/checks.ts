import type { Exit } from "./daemon-process.js";

/** One row of the acceptance table: what was checked, what happened, and whether that is right. */
export interface Check {
  readonly check: string;
  readonly result: string;
  readonly pass: boolean;
}

/*
 * The checkers are pure functions of what a drill observed, so each one can be shown to fail on an
 * observation that breaks its expectation (see test/drills/checks.test.ts) — a checker that
 * cannot fail proves nothing.
 */

function exitText(exit: Exit): string {
  return exit.signal ? `killed by ${exit.signal}` : `exit ${exit.code}`;
}

export interface RelaySigtermObservation {
  readonly total: number;
  readonly batchSize: number;
  readonly exit: Exit;
  /** Fields of the relay's `drained` line; null when it never logged one. */
  readonly drained: { readonly published: number; readonly unsent: number; readonly clean: boolean } | null;
}

export function checkRelaySigterm(o: RelaySigtermObservation): Check {
  const check = `relay: ${o.total} events queued, SIGTERM during the first batch of ${o.batchSize}`;
  if (!o.drained) return { check, result: `no drained line; ${exitText(o.exit)}`, pass: false };
  const { published, unsent, clean } = o.drained;
  const pass =
    clean &&
    published === o.batchSize &&
    unsent === o.total - o.batchSize &&
    published + unsent === o.total &&
    o.exit.code === 0;
  const completes =
    published === o.batchSize ? "batch completes" : `batch cut at ${published}/${o.batchSize}`;
  return {
    check,
    result: `${completes}; published=${published} + unsent=${unsent} = ${published + unsent}/${o.total}; clean=${clean}; ${exitText(o.exit)}`,
    pass,
  };
}

export interface ConsumerSigtermObservation {
  readonly exit: Exit;
  /** Messages the consumer had taken into its handlers when SIGTERM arrived. */
  readonly inHandlersAtStop: number;
  readonly drained: { readonly processed: number; readonly clean: boolean; readonly released: number } | null;
  /** Messages still invisible (received, not deleted) in the queue after the consumer exited. */
  readonly undeletedAfterExit: number;
}

export function checkConsumerSigterm(o: ConsumerSigtermObservation): Check {
  const check = `consumer: SIGTERM while ${o.inHandlersAtStop} messages are in the handler`;
  if (!o.drained) return { check, result: `no drained line; ${exitText(o.exit)}`, pass: false };
  const pass = o.inHandlersAtStop > 0 && o.drained.clean && o.undeletedAfterExit === 0 && o.exit.code === 0;
  return {
    check,
    result: `received messages finish (processed=${o.drained.processed}, released=${o.drained.released}, undeleted=${o.undeletedAfterExit}); clean=${o.drained.clean}; ${exitText(o.exit)}`,
    pass,
  };
}

export interface DeliveryObservation {
  readonly expected: number;
  /** Distinct events in the inbox. */
  readonly inbox: number;
  /** Rows of the example handler's effect table. */
  readonly effects: number;
  /** Deliveries the inbox recognised as already processed, summed over every consumer run. */
  readonly duplicates: number;
  readonly queueDepth: number;
  readonly dlqDepth: number;
}

export function checkRestartDrain(o: DeliveryObservation): Check {
  const pass =
    o.inbox === o.expected &&
    o.effects === o.expected &&
    o.duplicates === 0 &&
    o.queueDepth === 0 &&
    o.dlqDepth === 0;
  return {
    check: "restart and drain everything",
    result: `inbox ${o.inbox}/${o.expected}, effects ${o.effects}, duplicate skips: ${o.duplicates}, queue ${o.queueDepth}, DLQ ${o.dlqDepth}`,
    pass,
  };
}

export interface SigkillObservation extends DeliveryObservation {
  /** Events the relay published more than once (counted at the bus). */
  readonly relayResent: number;
  readonly kills: number;
}

export function checkSigkill(o: SigkillObservation): Check {
  const pass = o.inbox === o.expected && o.effects === o.expected && o.queueDepth === 0 && o.dlqDepth === 0;
  return {
    check: `same with SIGKILL (comparison, ${o.kills} kills)`,
    result: `relay re-sent ${o.relayResent}, inbox caught ${o.duplicates} duplicates; effects ${o.effects}/${o.expected} (exactly once: ${o.effects === o.expected})`,
    pass,
  };
}

export interface RestartSeriesObservation extends DeliveryObservation {
  readonly lost: number;
  readonly exits: readonly Exit[];
  readonly stopMs: readonly number[];
}

function latencyText(stopMs: readonly number[]): string {
  if (stopMs.length === 0) return "no stops";
  const sorted = [...stopMs].sort((a, b) => a - b);
  const median = sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
  return `stop latency min/median/max ${sorted[0]}/${median}/${sorted[sorted.length - 1]} ms`;
}

export function checkRollingRestart(o: RestartSeriesObservation): Check {
  const nonZero = o.exits.filter((exit) => exit.code !== 0).length;
  const pass = o.lost === 0 && o.duplicates === 0 && nonZero === 0 && o.effects === o.expected;
  return {
    check: `rolling restart: ${o.stopMs.length} SIGTERM restarts, 2 replicas each`,
    result: `lost ${o.lost}, duplicate skips ${o.duplicates}, non-zero exits ${nonZero} (of ${o.exits.length} stops); ${latencyText(o.stopMs)}`,
    pass,
  };
}

export interface ChaosObservation extends DeliveryObservation {
  readonly lost: number;
  readonly kills: number;
  readonly postgresRestarts: number;
  readonly busOutages: number;
  readonly relayResent: number;
}

export function checkChaos(o: ChaosObservation): Check {
  const pass = o.lost === 0 && o.effects === o.expected && o.inbox === o.expected;
  return {
    check: `chaos: ${o.kills} SIGKILLs, ${o.postgresRestarts} Postgres restart, ${o.busOutages} bus outage`,
    result: `lost ${o.lost}, effects ${o.effects}/${o.expected} (exactly once: ${o.effects === o.expected}); relay re-sent ${o.relayResent}, duplicates caught ${o.duplicates}`,
    pass,
  };
}
