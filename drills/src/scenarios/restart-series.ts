import { performance } from "node:perf_hooks";
import { type RunningPostgres, startEmbeddedPostgres, statsClientFor } from "@outbox/devstack";
import { sleep } from "@outbox/shared";
import {
  DaemonFleet,
  type DaemonProcess,
  type Exit,
  isRunning,
  seededRandom,
} from "@outbox/test-kit/process";
import type { DeliveryObservation } from "../checks.js";
import { consumerEnv, DRILL_TOPIC, relayEnv } from "../daemons.js";
import type { DrillContext } from "../drill-context.js";
import { type DrillEnvironment, prepareDrillEnvironment } from "../drill-environment.js";
import { observeDelivery, type TableCounts, waitForFullDelivery } from "../observe.js";
import { produceSteadily } from "../produce-events.js";
import { quickConsumerVisibility, quickRelayLeases } from "./fast-recovery-env.js";

type Kind = "relay" | "consumer";

/** One thing the series does to the system at a random moment. */
type Disruption =
  | { readonly kind: Kind; readonly slot: number; readonly atMs: number }
  | { readonly kind: "postgres-restart"; readonly atMs: number }
  | { readonly kind: "bus-outage"; readonly atMs: number };

export interface RestartSeriesOptions {
  /** SIGTERM: a rolling restart, which must cause nothing. SIGKILL: chaos, which the inbox must absorb. */
  readonly signal: "SIGTERM" | "SIGKILL";
  readonly postgresRestarts: number;
  readonly busOutages: number;
}

export interface RestartSeriesOutcome {
  readonly counts: TableCounts;
  readonly delivery: DeliveryObservation;
  /** Exits of every stop: each restart plus the final stop of every replica. */
  readonly exits: readonly Exit[];
  /** Replicas that exited during start-up because a dependency was down; each was replaced. */
  readonly crashedStarts: readonly Exit[];
  /** SIGTERM → exit of each restart (empty for SIGKILL). */
  readonly stopMs: readonly number[];
  readonly relayResent: number;
  readonly schedule: readonly Disruption[];
  readonly durationMs: number;
}

const REPLICAS = 2;
const BUS_OUTAGE_MS = 3_000;
const POSTGRES_DOWN_MS = 2_000;

function planDisruptions(context: DrillContext, options: RestartSeriesOptions): Disruption[] {
  const random = seededRandom(context.seed);
  const window = context.scale.seriesDurationMs;
  // Leave the first and last tenth quiet, so the series starts and ends with both replicas up.
  const moment = () => Math.round(window * (0.1 + 0.8 * random()));
  const plan: Disruption[] = [];
  for (const kind of ["relay", "consumer"] as const) {
    for (let i = 0; i < context.scale.restarts; i++) {
      plan.push({ kind, slot: Math.floor(random() * REPLICAS), atMs: moment() });
    }
  }
  for (let i = 0; i < options.postgresRestarts; i++) plan.push({ kind: "postgres-restart", atMs: moment() });
  for (let i = 0; i < options.busOutages; i++) plan.push({ kind: "bus-outage", atMs: moment() });
  return plan.sort((a, b) => a.atMs - b.atMs);
}

/**
 * A producer at a steady rate, two replicas of each daemon, and the planned disruptions at their
 * moments; then everything drains and stops. Replicas of one kind are restarted one at a time, as
 * a rolling deployment does.
 */
export async function runRestartSeries(
  context: DrillContext,
  options: RestartSeriesOptions,
): Promise<RestartSeriesOutcome> {
  const { faults, progress, scale } = context;
  const started = performance.now();
  const killing = options.signal === "SIGKILL";
  // Only a drill that restarts Postgres needs a server of its own; the others share the stack's.
  const ownPostgres: RunningPostgres | null =
    options.postgresRestarts > 0 ? await startEmbeddedPostgres() : null;
  const environment: DrillEnvironment = await prepareDrillEnvironment(context, {
    label: killing ? "chaos" : "rolling",
    ...(ownPostgres ? { postgresAdminUrl: ownPostgres.adminUrl } : {}),
    ...(killing ? { visibilityTimeoutSeconds: 5 } : {}),
  });
  const { topicArn } = environment.resources;
  const fleet = new DaemonFleet();
  const relayOverrides = killing ? quickRelayLeases : {};
  const consumerOverrides = { ...(killing ? quickConsumerVisibility : {}), DRILL_HANDLER_MS: "20" };
  const generation: Record<Kind, number> = { relay: 0, consumer: 0 };
  const launch = (kind: Kind, slot: number): DaemonProcess => {
    generation[kind] += 1;
    const name = `${kind}-${"ab"[slot]}#${generation[kind]}`;
    return kind === "relay"
      ? fleet.relay(name, relayEnv(environment, relayOverrides))
      : fleet.consumer(name, consumerEnv(environment, consumerOverrides));
  };
  const crashedStarts: Exit[] = [];
  /**
   * Starts a replica in `slot` and waits until it is up, as a rolling deployment does before it
   * touches the next one. A replica that cannot start because a dependency is down (Postgres
   * restarting) exits 1; like the platform, the drill then starts another one.
   */
  const launchUntilStarted = async (kind: Kind, slot: number): Promise<DaemonProcess> => {
    for (;;) {
      const fresh = launch(kind, slot);
      replicas[kind][slot] = fresh;
      if (kind === "consumer") allConsumers.push(fresh);
      try {
        await fresh.waitForLog("started");
        return fresh;
      } catch (error) {
        if (isRunning(fresh)) throw error;
        const exit = await fresh.exited;
        crashedStarts.push(exit);
        progress(`${fresh.name} could not start (${exit.signal ?? `exit ${exit.code}`}); starting another`);
        await sleep(1_000);
      }
    }
  };
  const replicas: Record<Kind, DaemonProcess[]> = {
    relay: Array.from({ length: REPLICAS }, (_, slot) => launch("relay", slot)),
    consumer: Array.from({ length: REPLICAS }, (_, slot) => launch("consumer", slot)),
  };
  const allConsumers: DaemonProcess[] = [...replicas.consumer];
  const exits: Exit[] = [];
  const stopMs: number[] = [];
  const schedule = planDisruptions(context, options);
  progress(
    `seed ${context.seed}: ${schedule.map((step) => `${step.kind}${"slot" in step ? `-${"ab"[step.slot]}` : ""}@${(step.atMs / 1000).toFixed(1)}s`).join(", ")}`,
  );

  const disrupt = async (step: Disruption) => {
    const at = `t=${((performance.now() - seriesStarted) / 1000).toFixed(1)}s (planned ${(step.atMs / 1000).toFixed(1)}s)`;
    if (step.kind === "postgres-restart") {
      progress(`${at} Postgres restart (down ${POSTGRES_DOWN_MS} ms)`);
      await ownPostgres?.restart({ downMs: POSTGRES_DOWN_MS });
      return;
    }
    if (step.kind === "bus-outage") {
      progress(`${at} bus outage: every publish fails for ${BUS_OUTAGE_MS} ms`);
      await faults.set({ topics: [topicArn], failureRate: 1, failureMode: "internal-error" });
      await sleep(BUS_OUTAGE_MS);
      await faults.clear();
      return;
    }
    const old = replicas[step.kind][step.slot];
    if (!old) return;
    const exit = await old.stop(options.signal);
    exits.push(exit);
    if (!killing) stopMs.push(exit.stopMs);
    const fresh = await launchUntilStarted(step.kind, step.slot);
    progress(
      `${at} ${options.signal} ${old.name} → ${exit.signal ?? `exit ${exit.code}`} in ${exit.stopMs} ms; started ${fresh.name}`,
    );
  };

  await Promise.all(
    [...replicas.relay, ...replicas.consumer].map((replica) => replica.waitForLog("started")),
  );
  const seriesStarted = performance.now();
  const producer = produceSteadily(environment.database, DRILL_TOPIC, scale.eventsPerSecond);
  try {
    // One lane per kind of disruption: restarts of one kind are sequential, kinds overlap.
    const byKind = new Map<string, Disruption[]>();
    for (const step of schedule) byKind.set(step.kind, [...(byKind.get(step.kind) ?? []), step]);
    await Promise.all(
      [...byKind.values()].map(async (steps) => {
        for (const step of steps) {
          await sleep(Math.max(0, step.atMs - (performance.now() - seriesStarted)));
          await disrupt(step);
        }
      }),
    );
    await sleep(Math.max(0, scale.seriesDurationMs - (performance.now() - seriesStarted)));
    const produced = await producer.stop();
    progress(`producer stopped after ${produced} events; draining`);
    await waitForFullDelivery(environment, [...replicas.relay, ...replicas.consumer]);
    for (const replica of [...replicas.relay, ...replicas.consumer])
      exits.push(await replica.stop("SIGTERM"));
    const { counts, delivery } = await observeDelivery(environment, allConsumers);
    const stats = statsClientFor(context.stack);
    return {
      counts,
      delivery,
      exits,
      crashedStarts,
      stopMs,
      relayResent: stats ? (await stats.topic(topicArn)).republished : Number.NaN,
      schedule,
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    await producer.stop();
    await fleet.killAll();
    await faults.clear().catch(() => {});
    await environment.close();
    await ownPostgres?.stop();
  }
}
