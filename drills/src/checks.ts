import type { Exit } from "@outbox/test-kit/process";
import { type CheckRow, checkName } from "./check-rows.js";

/** One row of the acceptance table: what was checked, what happened, and whether that is right. */
export interface Check {
  /** Which of the table's rows this is (`CHECK_ROWS`). */
  readonly row: CheckRow;
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
  const row = "relaySigterm";
  const check = checkName(row, { total: o.total, batchSize: o.batchSize });
  if (!o.drained) return { row, check, result: `no drained line; ${exitText(o.exit)}`, pass: false };
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
    row,
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
  const row = "consumerSigterm";
  const check = checkName(row, { inHandlers: o.inHandlersAtStop });
  if (!o.drained) return { row, check, result: `no drained line; ${exitText(o.exit)}`, pass: false };
  const pass = o.inHandlersAtStop > 0 && o.drained.clean && o.undeletedAfterExit === 0 && o.exit.code === 0;
  return {
    row,
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
    row: "restartDrain",
    check: checkName("restartDrain", {}),
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
    row: "sigkill",
    check: checkName("sigkill", { kills: o.kills }),
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
    row: "rollingRestart",
    check: checkName("rollingRestart", { restarts: o.stopMs.length }),
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
    row: "chaos",
    check: checkName("chaos", {
      kills: o.kills,
      postgresRestarts: o.postgresRestarts,
      busOutages: o.busOutages,
    }),
    result: `lost ${o.lost}, effects ${o.effects}/${o.expected} (exactly once: ${o.effects === o.expected}); relay re-sent ${o.relayResent}, duplicates caught ${o.duplicates}`,
    pass,
  };
}

export interface TerminationRaceRun {
  /** The wait between the stop decision and SIGTERM. */
  readonly preStopMs: number;
  /** How long after the stop decision the proxy dropped the replica from its list. */
  readonly propagationMs: number;
  /** Requests the simulator predicts lost for the same settings and rate. */
  readonly predicted: number;
  /** Requests that got no answer from the app (a proxy error or no response). */
  readonly measured: number;
  readonly sent: number;
}

export interface TerminationRaceObservation {
  readonly runs: readonly TerminationRaceRun[];
}

function signed(n: number): string {
  return n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "±0";
}

/**
 * The simulator against reality: the drill passes when prediction and measurement agree on which
 * settings drop nothing, and the runs include both a setting that drops and one that does not (a
 * run of only clean settings could not tell a wrong model from a right one).
 */
export function checkTerminationRace(o: TerminationRaceObservation): Check {
  const agree = o.runs.every((run) => (run.predicted === 0) === (run.measured === 0));
  const contrast = o.runs.some((run) => run.predicted > 0) && o.runs.some((run) => run.predicted === 0);
  const propagation = o.runs[0]?.propagationMs ?? 0;
  const runs = o.runs.map(
    (run) =>
      `preStop ${run.preStopMs} ms: predicted ${run.predicted}, measured ${run.measured} of ${run.sent} (${signed(run.measured - run.predicted)})`,
  );
  return {
    row: "terminationRace",
    check: checkName("terminationRace", { propagationMs: propagation }),
    result: runs.length > 0 ? runs.join("; ") : "no runs",
    pass: agree && contrast,
  };
}

/** Milliseconds the way the acceptance table prints them: "2 981 ms". */
export function formatMs(ms: number): string {
  return `${String(Math.round(ms)).replace(/\B(?=(\d{3})+(?!\d))/g, " ")} ms`;
}

/** Seconds with one decimal: "10.1 s". */
export function formatSeconds(ms: number): string {
  return `${(ms / 1_000).toFixed(1)} s`;
}

/** What one HTTP request of a drill got: a status, or "cut" when the connection failed. */
export type HttpOutcome = number | "cut";

function outcomeText(outcomes: readonly HttpOutcome[]): string {
  const counts = new Map<string, number>();
  for (const outcome of outcomes) counts.set(String(outcome), (counts.get(String(outcome)) ?? 0) + 1);
  return [...counts].map(([outcome, count]) => `${count}× ${outcome}`).join(", ");
}

export interface HttpStopObservation {
  /** Requests in flight (held before their commit) when the signal arrived. */
  readonly inFlight: number;
  readonly holdMs: number;
  readonly outcomes: readonly HttpOutcome[];
  /** Photos and photo.posted events these requests committed. */
  readonly committedPhotos: number;
  readonly committedEvents: number;
  readonly exit: Exit;
}

export interface HttpSigtermObservation extends HttpStopObservation {
  /** Fields of the `graceful shutdown complete` line (or its warning); null when neither was logged. */
  readonly shutdown: { readonly clean: boolean; readonly cut: number } | null;
}

export function checkHttpSigterm(o: HttpSigtermObservation): Check {
  const check = checkName("httpSigterm", { inFlight: o.inFlight, hold: formatSeconds(o.holdMs) });
  const answered = o.outcomes.filter((outcome) => outcome === 201).length;
  const pass =
    o.inFlight > 0 &&
    answered === o.inFlight &&
    o.outcomes.length === o.inFlight &&
    o.shutdown?.clean === true &&
    o.shutdown.cut === 0 &&
    o.committedPhotos === o.inFlight &&
    o.committedEvents === o.inFlight &&
    o.exit.code === 0;
  const shutdown = o.shutdown ? `clean=${o.shutdown.clean}, cut=${o.shutdown.cut}` : "no shutdown line";
  return {
    row: "httpSigterm",
    check,
    result: `${answered}/${o.inFlight} answered 201 (${outcomeText(o.outcomes)}); ${shutdown}; committed ${o.committedPhotos} photos + ${o.committedEvents} outbox events; ${exitText(o.exit)}`,
    pass,
  };
}

export function checkHttpSigkill(o: HttpStopObservation): Check {
  const cut = o.outcomes.filter((outcome) => outcome === "cut").length;
  // The comparison: a kill cuts every request, and with the hold before the commit nothing commits.
  const pass =
    o.inFlight > 0 &&
    cut === o.inFlight &&
    o.outcomes.length === o.inFlight &&
    o.committedPhotos === 0 &&
    o.committedEvents === 0 &&
    o.exit.signal === "SIGKILL";
  return {
    row: "httpSigkill",
    check: checkName("httpSigkill", { inFlight: o.inFlight }),
    result: `${cut}/${o.inFlight} cut (client errors; ${outcomeText(o.outcomes)}); committed ${o.committedPhotos} photos + ${o.committedEvents} outbox events; ${exitText(o.exit)}`,
    pass,
  };
}

export interface SlowDependencyObservation {
  readonly stubHangMs: number;
  readonly equipmentTimeoutMs: number;
  readonly status: HttpOutcome;
  readonly gearLink: string | null;
  readonly elapsedMs: number;
  /** The X-Request-Timeout-Ms the stub received (the client's own timeout travels without a caller's header). */
  readonly stubReceivedMs: number | null;
  /** Link state once the stub recovered and reconciliation ran. */
  readonly linkedAfterRecovery: boolean;
  /** How many links the stub holds for the photo: 1, however often it was asked. */
  readonly linksAtStub: number;
}

export function checkSlowDependency(o: SlowDependencyObservation): Check {
  // Bounds, not the figure: at least the client's timeout, and answered well before the stub would.
  const timedOutOnOurSide = o.elapsedMs >= o.equipmentTimeoutMs && o.elapsedMs < o.stubHangMs;
  const pass =
    o.status === 201 &&
    o.gearLink === "pending" &&
    timedOutOnOurSide &&
    o.stubReceivedMs !== null &&
    o.stubReceivedMs <= o.equipmentTimeoutMs &&
    o.linkedAfterRecovery &&
    o.linksAtStub === 1;
  return {
    row: "slowDependency",
    check: checkName("slowDependency", { hang: formatSeconds(o.stubHangMs) }),
    result: `${o.status} in ${formatSeconds(o.elapsedMs)}, link ${o.gearLink ?? "?"}; stub received ${o.stubReceivedMs === null ? "nothing" : formatMs(o.stubReceivedMs)}; after recovery ${o.linkedAfterRecovery ? "linked" : "still pending"} by reconciliation (${o.linksAtStub} link at the stub)`,
    pass,
  };
}

export interface DeadlineObservation {
  readonly headerMs: number;
  readonly equipmentTimeoutMs: number;
  readonly status: HttpOutcome;
  readonly gearLink: string | null;
  readonly elapsedMs: number;
  readonly stubReceivedMs: number | null;
  /** Time from sending the request to the stub receiving the call, measured by the drill (≥ the service's own). */
  readonly upstreamMs: number;
}

export function checkDeadline(o: DeadlineObservation): Check {
  const received = o.stubReceivedMs;
  // The service's own time upstream is below what the drill measured around it, so the value sent
  // on is at least the header minus that; and never more than the header.
  const propagated = received !== null && received <= o.headerMs && received >= o.headerMs - o.upstreamMs;
  // Answered with the caller's deadline, well before the fixed 10 s of the client would have fired.
  const answeredInTime =
    o.elapsedMs >= o.headerMs * 0.9 && o.elapsedMs < (o.headerMs + o.equipmentTimeoutMs) / 2;
  const pass = o.status === 201 && o.gearLink === "pending" && propagated && answeredInTime;
  return {
    row: "deadline",
    check: checkName("deadline", { headerMs: o.headerMs }),
    result: `${o.status} in ${formatSeconds(o.elapsedMs)} (not ${formatSeconds(o.equipmentTimeoutMs)}), link ${o.gearLink ?? "?"}; stub received ${received === null ? "nothing" : `${formatMs(received)} (${formatMs(o.headerMs)} − ${formatMs(o.headerMs - received)} upstream)`}`,
    pass,
  };
}

export interface PhotoChainObservation {
  readonly posts: number;
  /** Posts answered 201. */
  readonly posted: number;
  /** photo.posted events in the outbox, and feed rows the consumer wrote for them. */
  readonly events: number;
  readonly feed: number;
  readonly lost: number;
  readonly duplicates: number;
  readonly restarts: number;
  readonly exits: readonly Exit[];
}

export function checkPhotoChain(o: PhotoChainObservation): Check {
  const nonZero = o.exits.filter((exit) => exit.code !== 0).length;
  const pass =
    o.posts > 0 &&
    o.posted === o.posts &&
    o.events === o.posted &&
    o.feed === o.events &&
    o.lost === 0 &&
    o.duplicates === 0 &&
    nonZero === 0;
  return {
    row: "photoChain",
    check: checkName("photoChain", { posts: o.posts, restarts: o.restarts }),
    result: `posted ${o.posted}/${o.posts}, events ${o.events}, feed rows ${o.feed} (exactly once: ${o.feed === o.events}); lost ${o.lost}, duplicate skips ${o.duplicates}, non-zero exits ${nonZero}`,
    pass,
  };
}

/** One daemon stopped with SIGTERM while a fault was on, and what its stop may take. */
export interface StopUnderFault {
  readonly daemon: string;
  readonly stopMs: number;
  /** Its drain timeout plus its shutdown overhead: what it promises to stay inside of. */
  readonly budgetMs: number;
  readonly exit: Exit;
}

export interface FaultObservation {
  /** What was done, e.g. "relay's idle Postgres backends frozen (SIGSTOP) 8 s". */
  readonly fault: string;
  /** Null when the fault was in place; otherwise why it could not be injected. */
  readonly notInjected: string | null;
  /** From the fault's start to the first warning or error of a daemon it hit; null: none did. */
  readonly noticeMs: number | null;
  /** Until work entering after the reference moment came out the far end; null: it never did. */
  readonly recoverMs: number | null;
  /** The reference of `recoverMs`: with the fault still on (a hung connection may never come back), or after it. */
  readonly recoverFrom: "fault start" | "fault end";
  readonly stops: readonly StopUnderFault[];
  readonly expected: number;
  readonly inbox: number;
  readonly effects: number;
  readonly lost: number;
  readonly dead: number;
  readonly outOfOrder: number;
  readonly overtaken: number;
}

function stopText(stop: StopUnderFault): string {
  return `${stop.daemon} ${formatSeconds(stop.stopMs)} of ${formatSeconds(stop.budgetMs)}, ${exitText(stop.exit)}`;
}

/**
 * One fault, judged only from what was measured: noticed, recovered, every stop during it inside
 * its budget with exit 0, nothing lost, every effect once, no event of a key overtaken.
 */
export function checkFault(o: FaultObservation): Check {
  if (o.notInjected !== null) {
    return {
      row: "fault",
      check: checkName("fault", { fault: o.fault }),
      result: `fault not injected: ${o.notInjected}`,
      pass: false,
    };
  }
  const stopsHeld = o.stops.every((stop) => stop.stopMs <= stop.budgetMs && stop.exit.code === 0);
  const orderHeld = o.outOfOrder === 0 && o.overtaken === 0;
  const once = o.effects === o.expected && o.inbox === o.expected;
  const pass =
    o.noticeMs !== null &&
    o.recoverMs !== null &&
    o.stops.length > 0 &&
    stopsHeld &&
    o.lost === 0 &&
    o.dead === 0 &&
    once &&
    orderHeld;
  const notice = o.noticeMs === null ? "never noticed" : `noticed ${formatSeconds(o.noticeMs)}`;
  const recover =
    o.recoverMs === null
      ? `never recovered (from the ${o.recoverFrom})`
      : `recovered ${formatSeconds(o.recoverMs)} after the ${o.recoverFrom}`;
  const order = orderHeld
    ? "per-key order held"
    : `per-key order broken (${o.outOfOrder} out of order, ${o.overtaken} overtaken)`;
  return {
    row: "fault",
    check: checkName("fault", { fault: o.fault }),
    result: [
      notice,
      recover,
      `SIGTERM: ${o.stops.length > 0 ? o.stops.map(stopText).join("; ") : "no stop"}`,
      `lost ${o.lost}${o.dead > 0 ? ` (${o.dead} dead)` : ""}`,
      `effects ${o.effects}/${o.expected} (exactly once: ${once})`,
      order,
    ].join(" · "),
    pass,
  };
}

export interface ReplayObservation {
  /** Events published (and processed) before the replay: the range republished. */
  readonly published: number;
  /** What `relay republish` said it sent; null when it printed no summary. */
  readonly replayed: number | null;
  readonly finished: boolean;
  /** Deliveries the consumer's inbox recognised as already processed. */
  readonly duplicates: number;
  readonly effectsBefore: number;
  readonly effectsAfter: number;
  readonly queueDepth: number;
}

export function checkReplay(o: ReplayObservation): Check {
  const row = "replay";
  const check = checkName(row, { published: o.published });
  if (o.replayed === null) return { row, check, result: "republish printed no summary", pass: false };
  const pass =
    o.finished &&
    o.replayed === o.published &&
    o.duplicates === o.replayed &&
    o.effectsBefore === o.published &&
    o.effectsAfter === o.effectsBefore &&
    o.queueDepth === 0;
  return {
    row,
    check,
    result: `republished ${o.replayed} (finished: ${o.finished}); consumer duplicates ${o.duplicates} = replayed; effects ${o.effectsBefore} → ${o.effectsAfter} (unchanged: ${o.effectsAfter === o.effectsBefore}); queue ${o.queueDepth}`,
    pass,
  };
}
export interface ClaimCheckObservation {
  /** Bytes of the large payload enqueued (over SNS's 256 KiB) and of the message body SQS carried for it. */
  readonly payloadBytes: number;
  readonly messageBytes: number;
  /** Inbox rows and effects of the large event, and whether the effect's payload is the one enqueued. */
  readonly inbox: number;
  readonly effects: number;
  readonly exactBytes: boolean;
  /** The DLQ's `poison_reason` of the event whose object was deleted; null when it never got there. */
  readonly deletedObjectReason: string | null;
  /** The deleted object's `s3://bucket/key`. */
  readonly deletedObject: string;
  readonly exits: readonly Exit[];
}

export function checkClaimCheck(o: ClaimCheckObservation): Check {
  const named =
    o.deletedObjectReason === `claimed_payload_missing: no object at ${o.deletedObject} (NoSuchKey)`;
  const exited = o.exits.every((exit) => exit.code === 0);
  const pass =
    o.payloadBytes > 256 * 1024 &&
    o.messageBytes < 1_024 &&
    o.inbox === 1 &&
    o.effects === 1 &&
    o.exactBytes &&
    named &&
    exited;
  return {
    row: "claimCheck",
    check: checkName("claimCheck", { payload: formatBytes(o.payloadBytes) }),
    result: `SQS body ${o.messageBytes} bytes (the pointer, with ExtendedPayloadSize); handled ${o.inbox}× (effects ${o.effects}), ${o.exactBytes ? "byte for byte" : "bytes differ"}; deleted object → DLQ: ${o.deletedObjectReason ?? "not in the DLQ"}; ${exited ? "exit 0" : o.exits.map(exitText).join(", ")}`,
    pass,
  };
}

/** Bytes the way the table prints them: "5.0 MiB", "300 KiB". */
function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB`
    : `${Math.round(bytes / 1024)} KiB`;
}

export interface KeyOrderObservation {
  readonly producers: number;
  readonly keys: number;
  /** Transactions held open after their enqueue, and relays SIGKILLed during the run. */
  readonly held: number;
  readonly kills: number;
  /** Events committed (what must arrive) and rolled back (what must not). */
  readonly expected: number;
  readonly rolledBack: number;
  /** First arrivals at the bus behind a later event of their key (`seq`), and events never arriving behind one. */
  readonly outOfOrder: number;
  readonly overtaken: number;
  /** Events whose `seq` is below that of an event of their key committed before them. */
  readonly commitOrderInversions: number;
  readonly inbox: number;
  readonly effects: number;
  readonly lost: number;
  readonly dead: number;
  /** Deliveries the inbox recognised as already processed. */
  readonly duplicates: number;
}

/**
 * Per-key order under racing producers: each key reaches the bus in the order its transactions
 * committed (no inversion at the bus against `seq`, none between `seq` and commit order), every
 * committed event processed exactly once, no rolled-back one. Only a run that held transactions
 * open and killed a relay can show it.
 */
export function checkKeyOrder(o: KeyOrderObservation): Check {
  const killed = o.kills === 1 ? "one of them SIGKILLed" : `${o.kills} of them SIGKILLed`;
  const row = "racingProducers";
  const check = checkName(row, { producers: o.producers, keys: o.keys, held: o.held, killed });
  const inversions = o.outOfOrder + o.commitOrderInversions;
  const once = o.inbox === o.expected && o.effects === o.expected && o.lost === 0 && o.dead === 0;
  const pass = o.held > 0 && o.kills > 0 && inversions === 0 && o.overtaken === 0 && once;
  return {
    row,
    check,
    result: [
      `per-key inversions ${inversions} (at the bus ${o.outOfOrder}, seq against commit order ${o.commitOrderInversions}), overtaken ${o.overtaken}`,
      `${o.expected} committed events: inbox ${o.inbox}, effects ${o.effects}, lost ${o.lost}${o.dead > 0 ? ` (${o.dead} dead)` : ""} (exactly once: ${once})`,
      `${o.rolledBack} rolled back; duplicates caught ${o.duplicates}`,
    ].join(" · "),
    pass,
  };
}

/** What the failover drill saw of one outage: the database cut (reset or hang), or the handlers' downstream down. */
export interface FailoverObservation {
  /** What was done, e.g. "database connections reset, new ones refused, for 60 s". */
  readonly outage: string;
  /** The database rows: the consumer must resume within this of the database answering (2 s). */
  readonly resumeLimitMs: number | null;
  /** From the database answering again to the consumer's intake resuming; null: it never did. */
  readonly resumedMs: number | null;
  /** Pauses the consumer took: database outages, or kill switch trips. */
  readonly pauses: number;
  /** Per daemon, its log lines about the outage (warnings and errors, and the lines naming it); the most allowed. */
  readonly outageLines: Readonly<Record<string, number>>;
  readonly outageLinesLimit: number | null;
  readonly stops: readonly StopUnderFault[];
  readonly expected: number;
  readonly inbox: number;
  readonly effects: number;
  readonly lost: number;
  readonly dlqDepth: number;
  readonly outOfOrder: number;
  readonly overtaken: number;
}

/**
 * One outage of what every message needs (issue #40): the consumer paused instead of spending the
 * messages' receives, nothing reached the DLQ, every effect once, per-key order held, every SIGTERM
 * during the outage inside its budget, few log lines; for the database, resumed within the limit.
 */
export function checkFailover(o: FailoverObservation): Check {
  const stopsHeld = o.stops.every((stop) => stop.stopMs <= stop.budgetMs && stop.exit.code === 0);
  const orderHeld = o.outOfOrder === 0 && o.overtaken === 0;
  const once = o.effects === o.expected && o.inbox === o.expected;
  const resumed = o.resumeLimitMs === null || (o.resumedMs !== null && o.resumedMs <= o.resumeLimitMs);
  const limit = o.outageLinesLimit;
  const quiet = limit === null || Object.values(o.outageLines).every((lines) => lines <= limit);
  const pass =
    o.pauses > 0 &&
    resumed &&
    quiet &&
    o.stops.length > 0 &&
    stopsHeld &&
    o.lost === 0 &&
    o.dlqDepth === 0 &&
    once &&
    orderHeld;
  const lines = Object.entries(o.outageLines)
    .map(([daemon, count]) => `${daemon} ${count}`)
    .join(", ");
  return {
    row: "failover",
    check: checkName("failover", { outage: o.outage }),
    result: [
      `paused ${o.pauses}×`,
      o.resumeLimitMs === null
        ? null
        : o.resumedMs === null
          ? "never resumed"
          : `resumed ${formatSeconds(o.resumedMs)} after the database`,
      `log lines about it: ${lines}${limit === null ? "" : ` (≤ ${limit})`}`,
      `SIGTERM: ${o.stops.length > 0 ? o.stops.map(stopText).join("; ") : "no stop"}`,
      `DLQ ${o.dlqDepth}`,
      `lost ${o.lost}`,
      `effects ${o.effects}/${o.expected} (exactly once: ${once})`,
      orderHeld
        ? "per-key order held"
        : `per-key order broken (${o.outOfOrder} out of order, ${o.overtaken} overtaken)`,
    ]
      .filter((part) => part !== null)
      .join(" · "),
    pass,
  };
}
