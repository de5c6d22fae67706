import http from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { startTcpFaultProxy, type TcpCut, type TcpFaultProxy } from "@outbox/devstack";
import { DOWNSTREAM_HANDLERS_MODULE } from "@outbox/example-handlers/modules";
import { sleep } from "@outbox/shared";
import { DaemonFleet, type DaemonProcess, judgeKeyOrder } from "@outbox/test-kit/process";
import { checkFailover, type FailoverObservation, formatSeconds, type StopUnderFault } from "../checks.js";
import { consumerEnv, DRILL_TOPIC, relayEnv, sumDrained } from "../daemons.js";
import type { DrillContext } from "../drill-context.js";
import { type DrillEnvironment, prepareDrillEnvironment } from "../drill-environment.js";
import { countTables, keyedEvents, queueDepths } from "../observe.js";
import { startOrderWitness } from "../order-witness.js";
import { enqueueBacklog, produceSteadily } from "../produce-events.js";
import type { ScenarioResult } from "../report.js";
import { firstEventThroughMs } from "./fault-rig.js";
import { pollFor, stopDuringFault } from "./faults.js";
import { faultConsumerEnv, faultRelayEnv } from "./faults-env.js";

/** Issue #40: the consumer resumes within this of the database answering again. */
const RESUME_LIMIT_MS = 2_000;
/** Issue #40: at most this many log lines about a database outage per daemon. */
const OUTAGE_LINES_LIMIT = 5;
/**
 * Events committed once the consumer's way to the database is cut and before the relay's is: the
 * relay publishes them, so they wait in the queue through the outage. A consumer that kept
 * receiving them would spend maxReceiveCount (5) leases of 5 s in 25 s, and the DLQ would have them.
 */
const BACKLOG_EVENTS = 200;
const MAX_RECEIVE_COUNT = 5;
const VISIBILITY_TIMEOUT_SECONDS = 5;
/**
 * The steady traffic: messages in flight at every moment, and a backlog from a 60 s outage (the
 * events committed meanwhile) that drains in a minute or two on a machine shared with others.
 */
const EVENTS_PER_SECOND = 20;
/** How long, after the outage, the backlog may take to drain. */
const AFTER_OUTAGE_LIMIT_MS = 300_000;
const WARNING_LEVELS = new Set(["warn", "error", "fatal"]);

/**
 * The kill switch at the drill's scale: it trips after 10 messages of which half failed within 10 s,
 * and holds intake 5 s, then 10 s, up to 20 s, so it trips several times in the drill's outage and
 * resumes soon after the downstream is back.
 */
const killSwitchEnv: Record<string, string> = {
  CONSUMER_KILL_SWITCH_TRIP_PERCENT: "50",
  CONSUMER_KILL_SWITCH_ACTIVITY_THRESHOLD: "10",
  CONSUMER_KILL_SWITCH_WINDOW_MS: "10000",
  CONSUMER_KILL_SWITCH_RESTART_MS: "5000",
  CONSUMER_KILL_SWITCH_RESTART_MAX_MS: "20000",
};

type OutageKind = TcpCut | "downstream";

export interface FailoverVariant {
  readonly name: string;
  readonly kind: OutageKind;
  readonly outage: (outageMs: number) => string;
}

export const FAILOVER_VARIANTS: readonly FailoverVariant[] = [
  {
    name: "database-reset",
    kind: "reset",
    outage: (ms) => `database cut ${formatSeconds(ms)}: connections reset, new ones refused`,
  },
  {
    name: "database-hang",
    kind: "hang",
    outage: (ms) => `database cut ${formatSeconds(ms)}: connections hang, new ones never answered`,
  },
  {
    name: "downstream-down",
    kind: "downstream",
    outage: (ms) => `the handlers' downstream answers 503 for ${formatSeconds(ms)} (kill switch)`,
  },
];

/** The handlers' downstream service: 204, or 503 while it is down. */
async function startDownstream(): Promise<{
  url: string;
  setDown(down: boolean): void;
  close(): Promise<void>;
}> {
  let down = false;
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(down ? 503 : 204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/charge`,
    setDown(value) {
      down = value;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `databaseUrl` through a fault proxy of its own: one per daemon kind, so each can be cut apart. */
async function proxied(databaseUrl: string): Promise<{ proxy: TcpFaultProxy; url: string }> {
  const url = new URL(databaseUrl);
  const proxy = await startTcpFaultProxy({ host: url.hostname, port: Number(url.port) });
  url.host = `127.0.0.1:${proxy.port}`;
  return { proxy, url: url.toString() };
}

/** A daemon's log lines about the outage between `from` and `to` (epoch ms): warnings, errors, and what names it. */
function outageLines(daemon: DaemonProcess, from: number, to: number): string[] {
  return daemon.lines.flatMap((line) => {
    const at = typeof line.time === "string" ? Date.parse(line.time) : Number.NaN;
    const msg = typeof line.msg === "string" ? line.msg : "";
    const warning = typeof line.level === "string" && WARNING_LEVELS.has(line.level);
    return at >= from &&
      at <= to &&
      (warning || /database|kill switch|working again|notifications back/.test(msg))
      ? [msg]
      : [];
  });
}

/** When the consumer logged that intake resumed after the database answered, in ms after `sinceEpochMs`. */
function resumedMs(consumer: DaemonProcess, sinceEpochMs: number): number | null {
  const line = consumer.lines.find(
    (candidate) => candidate.msg === "database answering again: intake resumed",
  );
  const at = typeof line?.time === "string" ? Date.parse(line.time) : Number.NaN;
  return Number.isNaN(at) ? null : at - sinceEpochMs;
}

async function runVariant(
  context: DrillContext,
  variant: FailoverVariant,
): Promise<{ observation: FailoverObservation; figures: Record<string, unknown> }> {
  const { progress, scale } = context;
  const environment: DrillEnvironment = await prepareDrillEnvironment(context, {
    label: `failover_${variant.name}`,
    fifo: true,
    maxReceiveCount: MAX_RECEIVE_COUNT,
    visibilityTimeoutSeconds: VISIBILITY_TIMEOUT_SECONDS,
  });
  const witness = await startOrderWitness(environment);
  const downstream = await startDownstream();
  const relayWay = await proxied(environment.databaseUrl);
  const consumerWay = await proxied(environment.databaseUrl);
  const fleet = new DaemonFleet();
  const producer = produceSteadily(environment.database, DRILL_TOPIC, EVENTS_PER_SECOND);
  try {
    const relayOptions = { ...faultRelayEnv, DATABASE_URL: relayWay.url };
    const consumerOptions = {
      ...faultConsumerEnv,
      ...killSwitchEnv,
      DATABASE_URL: consumerWay.url,
      CONSUMER_HANDLERS_MODULE: DOWNSTREAM_HANDLERS_MODULE,
      DRILL_DOWNSTREAM_URL: downstream.url,
    };
    const databaseCut = variant.kind !== "downstream";
    const relay = fleet.relay("relay", relayEnv(environment, relayOptions));
    const consumer = fleet.consumer("consumer", consumerEnv(environment, consumerOptions));
    const probes = new Map<"relay" | "consumer", DaemonProcess>([
      ["consumer", fleet.consumer("consumer-probe", consumerEnv(environment, consumerOptions))],
    ]);
    if (databaseCut) probes.set("relay", fleet.relay("relay-probe", relayEnv(environment, relayOptions)));
    const daemons = [relay, consumer, ...probes.values()];
    await Promise.all(daemons.map((daemon) => daemon.waitForLog("started")));
    const flowing = await pollFor(() => firstEventThroughMs(environment, 0), 30_000);
    if (flowing === null) throw new Error(`${variant.name}: no event reached the inbox before the outage`);

    const cutEpoch = Date.now();
    const cutAt = performance.now();
    progress(`${variant.name}: traffic flows; ${variant.outage(scale.outageMs)}`);
    if (databaseCut) await consumerWay.proxy.cut(variant.kind as TcpCut);
    else downstream.setDown(true);
    // A backlog the relay publishes while the consumer cannot handle it: it waits in the queue.
    const backlog = await enqueueBacklog(environment.database, DRILL_TOPIC, BACKLOG_EVENTS);
    await pollFor(async () => ((await countTables(environment)).unsent === 0 ? 1 : null), 10_000);
    const queuedAtCut = (await queueDepths(environment)).queue;
    if (databaseCut) await relayWay.proxy.cut(variant.kind as TcpCut);

    const stopping = (async (): Promise<StopUnderFault[]> => {
      await sleep(Math.max(0, scale.outageMs / 2 - (performance.now() - cutAt)));
      return Promise.all([...probes].map(([kind, probe]) => stopDuringFault(kind, probe)));
    })();
    await sleep(Math.max(0, scale.outageMs - (performance.now() - cutAt)));
    const restoredEpoch = Date.now();
    if (databaseCut) await Promise.all([consumerWay.proxy.restore(), relayWay.proxy.restore()]);
    else downstream.setDown(false);
    const stops = await stopping;
    progress(`${variant.name}: back after ${formatSeconds(performance.now() - cutAt)}; draining`);

    const produced = await producer.stop();
    const settledMs = await pollFor(async () => {
      const [counts, depths] = await Promise.all([countTables(environment), queueDepths(environment)]);
      return counts.unsent === 0 && depths.queue === 0 ? performance.now() - cutAt : null;
    }, AFTER_OUTAGE_LIMIT_MS);
    const settledEpoch = Date.now();
    await Promise.all([relay.stop("SIGTERM"), consumer.stop("SIGTERM")]);
    const [counts, depths, events, accepted] = await Promise.all([
      countTables(environment),
      queueDepths(environment),
      keyedEvents(environment),
      witness.read(),
    ]);
    const order = judgeKeyOrder(events, accepted);
    const hit = databaseCut ? { relay, consumer } : { consumer };
    const lines = Object.fromEntries(
      Object.entries(hit).map(([kind, daemon]) => [kind, outageLines(daemon, cutEpoch, settledEpoch)]),
    );
    const observation: FailoverObservation = {
      outage: variant.outage(scale.outageMs),
      resumeLimitMs: databaseCut ? RESUME_LIMIT_MS : null,
      resumedMs: databaseCut ? resumedMs(consumer, restoredEpoch) : null,
      pauses: sumDrained([consumer], databaseCut ? "databaseOutages" : "killSwitchTrips"),
      outageLines: Object.fromEntries(Object.entries(lines).map(([kind, said]) => [kind, said.length])),
      outageLinesLimit: databaseCut ? OUTAGE_LINES_LIMIT : null,
      stops,
      expected: counts.enqueued,
      inbox: counts.inbox,
      effects: counts.effects,
      lost: counts.lost,
      dlqDepth: depths.dlq,
      outOfOrder: order.outOfOrder,
      overtaken: order.overtaken,
    };
    const drained = consumer.lines.find((line) => line.msg === "drained") ?? {};
    return {
      observation,
      figures: {
        produced,
        backlog: backlog.length,
        queuedAtCut,
        settledAfterCutMs: settledMs === null ? null : Math.round(settledMs),
        counts,
        order,
        consumerDrained: drained,
        linesAboutTheOutage: lines,
        consumerPausedMs: databaseCut ? drained.databaseOutageMs : drained.killSwitchPausedMs,
      },
    };
  } finally {
    await producer.stop();
    await fleet.killAll();
    await Promise.all([relayWay.proxy.close(), consumerWay.proxy.close(), downstream.close()]);
    await environment.close();
  }
}

/**
 * Issue #40: what every message needs goes away under steady traffic, with a backlog waiting in the
 * queue: the database (through a proxy, its connections reset and new ones refused, then hanging)
 * and the handlers' downstream (the kill switch). One row each: the consumer paused instead of
 * spending the messages' receives, resumed in time, said so in a few lines, stopped inside its
 * budget meanwhile; nothing in the DLQ, every effect once, per-key order held.
 */
export async function runFailoverDrill(
  context: DrillContext,
  variants: readonly FailoverVariant[] = FAILOVER_VARIANTS,
): Promise<ScenarioResult[]> {
  const started = performance.now();
  const checks = [];
  const figures: Record<string, unknown> = { outageMs: context.scale.outageMs };
  for (const variant of variants) {
    const { observation, figures: rowFigures } = await runVariant(context, variant);
    const check = checkFailover(observation);
    context.progress(`${variant.name}: ${check.pass ? "pass" : "FAIL"} — ${check.result}`);
    checks.push(check);
    figures[variant.name] = { ...observation, ...rowFigures };
  }
  return [{ scenario: "failover", checks, figures, durationMs: Math.round(performance.now() - started) }];
}
