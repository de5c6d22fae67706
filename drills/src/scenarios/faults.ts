import { performance } from "node:perf_hooks";
import { type RunningPostgres, startEmbeddedPostgres } from "@outbox/devstack";
import { sleep } from "@outbox/shared";
import { type DaemonProcess, isRunning, judgeKeyOrder } from "@outbox/test-kit/process";
import { checkFault, type FaultObservation, formatSeconds, type StopUnderFault } from "../checks.js";
import { DRILL_TOPIC } from "../daemons.js";
import type { DrillContext } from "../drill-context.js";
import { countFeedRows, countTables, keyedEvents, queueDepths } from "../observe.js";
import { produceSteadily } from "../produce-events.js";
import type { ScenarioResult } from "../report.js";
import { FAULTS, type FaultSpec } from "./fault-kinds.js";
import {
  type FaultedDaemon,
  type FaultRig,
  firstEventThroughMs,
  firstWarningMs,
  postSteadily,
  type RoutedPost,
  type SteadyPosts,
  startFaultRig,
} from "./fault-rig.js";
import { stopBudgetMs, TIME_SCALE } from "./faults-env.js";

/** The probe's SIGTERM lands this long into the fault: inside it, before a daemon could have healed. */
const SIGTERM_INTO_FAULT_MS = 500;
/** A stop still running after this many budgets is ended with SIGKILL (and fails its row). */
const STOP_GIVE_UP_BUDGETS = 3;
/** How long, after the fault ends, recovery and the full drain may take. */
const AFTER_FAULT_LIMIT_MS = 60_000;
const POLL_MS = 100;
const POSTS_PER_SECOND = 10;

/** SIGTERM, and the stop as measured; a stop that outlasts every budget is ended with SIGKILL. */
export async function stopDuringFault(kind: FaultedDaemon, probe: DaemonProcess): Promise<StopUnderFault> {
  const budgetMs = stopBudgetMs[kind];
  const stopping = probe.stop("SIGTERM");
  const ended = await Promise.race([stopping.then(() => true), sleep(budgetMs * STOP_GIVE_UP_BUDGETS)]);
  if (ended !== true && isRunning(probe)) probe.child.kill("SIGKILL");
  const exit = await stopping;
  return { daemon: kind, stopMs: exit.stopMs, budgetMs, exit: { code: exit.code, signal: exit.signal } };
}

/** Polls `measure` until it yields a figure or `limitMs` has passed; a failing read (Postgres down) counts as none yet. */
export async function pollFor(
  measure: () => Promise<number | null>,
  limitMs: number,
): Promise<number | null> {
  const giveUpAt = performance.now() + limitMs;
  for (;;) {
    const figure = await measure().catch(() => null);
    if (figure !== null || performance.now() > giveUpAt) return figure;
    await sleep(POLL_MS);
  }
}

/** When a post sent at or after `since` (performance clock) to `port` was answered 201, in ms after `since`. */
function firstPostThroughMs(posts: readonly RoutedPost[], port: number, since: number): number | null {
  const through = posts
    .filter((post) => post.port === port && post.sentAt >= since && post.outcome === 201)
    .map((post) => post.sentAt + post.elapsedMs - since);
  return through.length > 0 ? Math.min(...through) : null;
}

/** The daemons the fault hits must each have noticed it: the row's figure is the last of them to. */
function noticedMs(rig: FaultRig, spec: FaultSpec, sinceEpochMs: number): number | null {
  let latest = 0;
  for (const kind of spec.hits) {
    const survivor = rig.survivors.get(kind);
    const noticed = survivor ? firstWarningMs(survivor, sinceEpochMs) : null;
    if (noticed === null) return null;
    latest = Math.max(latest, noticed);
  }
  return latest;
}

/** Ids of photos answered 201 without a photo.posted event: posts a client was told are safe, and are not. */
async function postsWithoutEvent(rig: FaultRig, posts: readonly RoutedPost[]): Promise<number> {
  const ids = posts
    .filter((post) => post.outcome === 201 && post.id !== null)
    .map((post) => post.id as string);
  if (ids.length === 0) return 0;
  const found = await rig.environment.database.db
    .selectFrom("outbox")
    .select("payload")
    .where("event_type", "=", "photo.posted")
    .execute();
  const withEvent = new Set(found.map((row) => (row.payload as { photoId?: string }).photoId));
  return ids.filter((id) => !withEvent.has(id)).length;
}

async function runFault(
  context: DrillContext,
  postgres: RunningPostgres,
  spec: FaultSpec,
): Promise<{ observation: FaultObservation; figures: Record<string, unknown> }> {
  const { progress, scale } = context;
  const rig = await startFaultRig(context, postgres, spec.name, spec.hits);
  const producer = produceSteadily(rig.environment.database, DRILL_TOPIC, scale.eventsPerSecond);
  const posts: SteadyPosts | null =
    rig.rotation.size > 0 ? postSteadily(rig.rotation, POSTS_PER_SECOND) : null;
  const alive = [...rig.survivors.values()];
  try {
    const flowing = await pollFor(() => firstEventThroughMs(rig.environment, 0), 30_000);
    if (flowing === null) throw new Error(`${spec.name}: no event reached the inbox before the fault`);
    const startedEpoch = Date.now();
    const startedPerf = performance.now();
    progress(`${spec.name}: traffic flows; ${spec.fault}`);
    const injected = await spec.inject(rig, context.faults);
    let recoverMs: number | null = null;
    let stopping: Promise<StopUnderFault[]> | undefined;
    try {
      stopping = (async () => {
        await sleep(SIGTERM_INTO_FAULT_MS);
        // Deregistered first, as a load balancer does before the task gets its SIGTERM.
        rig.rotation.delete("api-probe");
        return Promise.all([...rig.probes].map(([kind, probe]) => stopDuringFault(kind, probe)));
      })();
      const survivingApi = rig.rotation.get("api");
      const recoveredWithFaultOn = () =>
        survivingApi !== undefined && posts
          ? Promise.resolve(firstPostThroughMs(posts.outcomes, survivingApi, startedPerf))
          : firstEventThroughMs(rig.environment, startedEpoch);
      if (spec.recoverFrom === "fault start") recoverMs = await pollFor(recoveredWithFaultOn, spec.holdMs);
      await sleep(Math.max(0, spec.holdMs - (performance.now() - startedPerf)));
    } finally {
      // However the fault's window ended: a frozen backend is thawed, a stopped server started, a rule cleared.
      await injected.lift();
    }
    // After the lift: a stop that hangs on the fault ends only once it is gone.
    const stops = (await stopping) ?? [];
    const endedEpoch = Date.now();
    if (spec.recoverFrom === "fault end") {
      recoverMs = await pollFor(() => firstEventThroughMs(rig.environment, endedEpoch), AFTER_FAULT_LIMIT_MS);
    }
    const noticeMs = noticedMs(rig, spec, startedEpoch);
    const produced = await producer.stop();
    const answered = (await posts?.stop()) ?? [];
    // Settled: nothing left to publish and nothing left in the queue. A dead or wrongly marked
    // row never arrives, so waiting for the inbox to be complete would only wait out the limit.
    const settledMs = await pollFor(async () => {
      const [counts, depths] = await Promise.all([
        countTables(rig.environment),
        queueDepths(rig.environment),
      ]);
      return counts.unsent === 0 && depths.queue === 0 ? performance.now() : null;
    }, AFTER_FAULT_LIMIT_MS);
    await Promise.all(alive.map((daemon) => daemon.stop("SIGTERM")));
    const [counts, feed, events, accepted, unbacked] = await Promise.all([
      countTables(rig.environment),
      countFeedRows(rig.environment),
      keyedEvents(rig.environment),
      rig.witness.read(),
      postsWithoutEvent(rig, answered),
    ]);
    const order = judgeKeyOrder(events, accepted);
    const observation: FaultObservation = {
      fault: spec.fault,
      notInjected: injected.notInjected,
      noticeMs,
      recoverMs,
      recoverFrom: spec.recoverFrom,
      stops,
      expected: counts.enqueued,
      inbox: counts.inbox,
      effects: counts.effects + feed,
      lost: counts.lost + unbacked,
      dead: counts.dead,
      outOfOrder: order.outOfOrder,
      overtaken: order.overtaken,
    };
    return {
      observation,
      figures: {
        ...injected.figures,
        produced,
        posts: answered.length,
        postsAnswered201: answered.filter((post) => post.outcome === 201).length,
        settled: settledMs !== null,
        counts,
        feed,
        order,
        postsWithoutEvent: unbacked,
      },
    };
  } finally {
    await producer.stop();
    await posts?.stop();
    await rig.close();
  }
}

/**
 * The faults production sees, each under steady traffic on a system of its own: a frozen
 * Postgres backend of each daemon, Postgres stopped and started, SNS down for minutes of the
 * relay's (scaled) time, SNS answering 200 with an empty body. One row per fault: noticed,
 * recovered, a SIGTERM during the fault inside its budget, nothing lost, effects once, order held.
 */
export async function runFaultsDrill(
  context: DrillContext,
  faults: readonly FaultSpec[] = FAULTS,
): Promise<ScenarioResult[]> {
  const started = performance.now();
  // A server of the drill's own: it is stopped and has backends frozen, which the stack's must not.
  const postgres = await startEmbeddedPostgres();
  context.progress(
    `faults: relay timing scaled 1:${TIME_SCALE}; stop budgets relay ${formatSeconds(stopBudgetMs.relay)}, consumer ${formatSeconds(stopBudgetMs.consumer)}, api ${formatSeconds(stopBudgetMs.api)}`,
  );
  try {
    const checks = [];
    const figures: Record<string, unknown> = { timeScale: TIME_SCALE, stopBudgetMs };
    for (const spec of faults) {
      const { observation, figures: rowFigures } = await runFault(context, postgres, spec);
      const check = checkFault(observation);
      context.progress(`${spec.name}: ${check.pass ? "pass" : "FAIL"} — ${check.result}`);
      checks.push(check);
      figures[spec.name] = { ...observation, ...rowFigures };
    }
    return [
      {
        scenario: "faults",
        checks,
        figures,
        durationMs: Math.round(performance.now() - started),
        seed: context.seed,
      },
    ];
  } finally {
    await postgres.stop();
  }
}
