import { performance } from "node:perf_hooks";
import { apiSettings } from "@outbox/api";
import { startEquipmentStub } from "@outbox/devstack";
import { sleep } from "@outbox/shared";
import { simulateStop, TICK_MS } from "@outbox/termination-race";
import { apiPort, DaemonFleet } from "@outbox/test-kit/process";
import { checkTerminationRace, type TerminationRaceRun } from "../checks.js";
import { apiEnv } from "../daemons.js";
import type { DrillContext } from "../drill-context.js";
import { type DrillEnvironment, prepareDrillEnvironment } from "../drill-environment.js";
import type { ScenarioResult } from "../report.js";
import { startRoundRobinProxy } from "../round-robin-proxy.js";
import { sendSteadily } from "../steady-requests.js";

/**
 * How long after the stop begins the proxy forgets the replica: the endpoint removal's propagation.
 * Long beside the ~200 ms a tsx process on a loaded machine takes to act on SIGTERM, which the
 * model does not count and which shortens the window in which requests are lost.
 */
const PROPAGATION_MS = 2_000;
/** Traffic through the proxy: 5 requests per 100 ms tick of the simulator. */
const REQUESTS_PER_SECOND = 50;
/**
 * What a preStop needs beyond the propagation: requests the proxy routed to the replica just before
 * it forgot it are still connecting, and the listener must outlive them. With no margin at all the
 * drill sat on a knife edge: under CPU load a replica now and then closed its listener with one such
 * connection still in its accept queue, and dropped it.
 */
const ROUTED_MARGIN_MS = 1_000;
/** The stop's preStop waits: none, and one that covers the propagation. */
const PRE_STOPS_MS = [0, PROPAGATION_MS + ROUTED_MARGIN_MS] as const;
/** Traffic before the stop begins, and after the stopped replica is gone and off the list. */
const WARM_UP_MS = 500;
const SETTLE_MS = 500;
/** A GET of one photo takes milliseconds; one tick of the simulator covers it. */
const LONGEST_REQUEST_MS = TICK_MS;

interface RaceRunOptions {
  readonly environment: DrillEnvironment;
  readonly equipmentUrl: string;
  readonly fleet: DaemonFleet;
  readonly preStopMs: number;
  readonly run: number;
}

/** The simulator's count for the same settings: the Kubernetes order, which is what the drill's proxy does. */
function predictedDrops(preStopMs: number): number {
  const outcome = simulateStop(
    { platform: "k8s", preStopSeconds: preStopMs / 1000, terminationGracePeriodSeconds: 30 },
    {
      propagationMs: PROPAGATION_MS,
      longestRequestMs: LONGEST_REQUEST_MS,
      drainMs: apiSettings.drainTimeoutMs.default ?? 0,
    },
    { replicas: 2, requestsPerTick: (REQUESTS_PER_SECOND * TICK_MS) / 1000 },
  );
  return outcome.requests.dropped;
}

/**
 * Two api replicas behind the proxy under steady GETs; the stop of the first begins, the proxy
 * removes it `PROPAGATION_MS` later, and it gets SIGTERM `preStopMs` after the stop began.
 */
async function raceOnce(options: RaceRunOptions): Promise<TerminationRaceRun & { exitCode: number | null }> {
  const env = apiEnv(options.environment, options.equipmentUrl);
  const [stopping, staying] = [
    options.fleet.api(`api-a#${options.run}`, env),
    options.fleet.api(`api-b#${options.run}`, env),
  ];
  const urls = (await Promise.all([apiPort(stopping), apiPort(staying)])).map(
    (port) => `http://127.0.0.1:${port}`,
  );
  const [stoppingUrl] = urls;
  if (stoppingUrl === undefined) throw new Error("no api replica to stop");
  const posted = await fetch(`${stoppingUrl}/photos`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ title: "termination race", gearIds: [] }),
  });
  if (posted.status !== 201)
    throw new Error(`POST /photos answered ${posted.status}: ${await posted.text()}`);
  const { id } = (await posted.json()) as { id: string };

  const proxy = await startRoundRobinProxy(urls);
  try {
    const traffic = sendSteadily(`${proxy.url}/photos/${id}`, REQUESTS_PER_SECOND);
    await sleep(WARM_UP_MS);
    // Both clocks start together, as on deletion: the removal's propagation and the preStop wait.
    const removal = sleep(PROPAGATION_MS).then(() => proxy.remove(stoppingUrl));
    await sleep(options.preStopMs);
    const exit = await stopping.stop("SIGTERM");
    await removal;
    await sleep(SETTLE_MS);
    const tally = await traffic.stop();
    await staying.stop("SIGTERM");
    return {
      preStopMs: options.preStopMs,
      propagationMs: PROPAGATION_MS,
      predicted: predictedDrops(options.preStopMs),
      measured: tally.failed,
      sent: tally.sent,
      exitCode: exit.code,
    };
  } finally {
    await proxy.close();
  }
}

/**
 * The termination race against reality: the simulator's prediction beside what two real api
 * processes behind a round-robin proxy lose, with no preStop and with one that covers the
 * propagation.
 */
export async function runTerminationRace(context: DrillContext): Promise<ScenarioResult[]> {
  const started = performance.now();
  const environment = await prepareDrillEnvironment(context, { label: "termination-race" });
  const equipment = await startEquipmentStub();
  const fleet = new DaemonFleet();
  try {
    const runs: (TerminationRaceRun & { exitCode: number | null })[] = [];
    for (const [index, preStopMs] of PRE_STOPS_MS.entries()) {
      const run = await raceOnce({
        environment,
        equipmentUrl: equipment.url,
        fleet,
        preStopMs,
        run: index + 1,
      });
      context.progress(
        `preStop ${preStopMs} ms: ${run.measured} of ${run.sent} requests lost (simulator: ${run.predicted})`,
      );
      runs.push(run);
    }
    const check = checkTerminationRace({ runs });
    context.progress(`termination-race: ${check.result}`);
    return [
      {
        scenario: "termination-race",
        checks: [check],
        figures: { propagationMs: PROPAGATION_MS, requestsPerSecond: REQUESTS_PER_SECOND, runs },
        durationMs: Math.round(performance.now() - started),
      },
    ];
  } finally {
    await fleet.killAll();
    await equipment.close();
    await environment.close();
  }
}
