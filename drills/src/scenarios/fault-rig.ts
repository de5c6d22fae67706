import { performance } from "node:perf_hooks";
import { type EquipmentStub, type RunningPostgres, startEquipmentStub } from "@outbox/devstack";
import { sleep } from "@outbox/shared";
import { apiPort, DaemonFleet, type DaemonProcess } from "@outbox/test-kit/process";
import { sql } from "kysely";
import { apiEnv, consumerEnv, relayEnv } from "../daemons.js";
import type { DrillContext } from "../drill-context.js";
import { type DrillEnvironment, prepareDrillEnvironment } from "../drill-environment.js";
import { type OrderWitness, startOrderWitness } from "../order-witness.js";
import { type PostOutcome, postPhotoRequest } from "../post-photos.js";
import { faultApiEnv, faultConsumerEnv, faultRelayEnv } from "./faults-env.js";

export type FaultedDaemon = "relay" | "consumer" | "api";

const WARNING_LEVELS = new Set(["warn", "error", "fatal"]);

/**
 * One fault's system: its own database (on the drill's own Postgres server) and FIFO topic/queue;
 * a replica of relay and consumer (and api, when the fault is the api's) that lives through the
 * fault; and for each daemon the fault hits, a second replica, the one stopped during the fault.
 */
export interface FaultRig {
  readonly environment: DrillEnvironment;
  readonly postgres: RunningPostgres;
  readonly survivors: ReadonlyMap<FaultedDaemon, DaemonProcess>;
  readonly probes: ReadonlyMap<FaultedDaemon, DaemonProcess>;
  /** The order the topic took events in. */
  readonly witness: OrderWitness;
  /** Ports of the api replicas that receive posts; the probe leaves before its SIGTERM. */
  readonly rotation: Map<FaultedDaemon | "api-probe", number>;
  close(): Promise<void>;
}

function launch(
  fleet: DaemonFleet,
  kind: FaultedDaemon,
  name: string,
  environment: DrillEnvironment,
  stub: EquipmentStub | null,
): DaemonProcess {
  if (kind === "relay") return fleet.relay(name, relayEnv(environment, faultRelayEnv));
  if (kind === "consumer") return fleet.consumer(name, consumerEnv(environment, faultConsumerEnv));
  if (!stub) throw new Error("an api replica needs the equipment stub");
  return fleet.api(name, apiEnv(environment, stub.url, faultApiEnv));
}

export async function startFaultRig(
  context: DrillContext,
  postgres: RunningPostgres,
  label: string,
  hits: readonly FaultedDaemon[],
): Promise<FaultRig> {
  const environment = await prepareDrillEnvironment(context, {
    label: `faults_${label}`,
    postgresAdminUrl: postgres.adminUrl,
    fifo: true,
    visibilityTimeoutSeconds: 5,
  });
  const witness = await startOrderWitness(environment);
  const fleet = new DaemonFleet();
  const stub = hits.includes("api") ? await startEquipmentStub() : null;
  const close = async () => {
    await fleet.killAll();
    await stub?.close();
    await environment.close();
  };
  try {
    const kinds: FaultedDaemon[] = ["relay", "consumer", ...(hits.includes("api") ? ["api" as const] : [])];
    const survivors = new Map(kinds.map((kind) => [kind, launch(fleet, kind, kind, environment, stub)]));
    const probes = new Map(
      hits.map((kind) => [kind, launch(fleet, kind, `${kind}-probe`, environment, stub)]),
    );
    const rotation = new Map<FaultedDaemon | "api-probe", number>();
    const api = survivors.get("api");
    const apiProbe = probes.get("api");
    if (api) rotation.set("api", await apiPort(api));
    if (apiProbe) rotation.set("api-probe", await apiPort(apiProbe));
    await Promise.all(
      [...survivors.values(), ...probes.values()].map((daemon) => daemon.waitForLog("started")),
    );
    return { environment, postgres, survivors, probes, witness, rotation, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The first warning or error a daemon logged at or after `sinceEpochMs`, as ms after it; null if none. */
export function firstWarningMs(daemon: DaemonProcess, sinceEpochMs: number): number | null {
  for (const line of daemon.lines) {
    if (typeof line.level !== "string" || !WARNING_LEVELS.has(line.level)) continue;
    const at = typeof line.time === "string" ? Date.parse(line.time) : Number.NaN;
    if (at >= sinceEpochMs) return at - sinceEpochMs;
  }
  return null;
}

/**
 * When the first event committed at or after `sinceEpochMs` was processed by the consumer, as ms
 * after it; null while none has been. Both clocks are this machine's.
 */
export async function firstEventThroughMs(
  environment: DrillEnvironment,
  sinceEpochMs: number,
): Promise<number | null> {
  const { rows } = await sql<{ at: number | null }>`
    SELECT extract(epoch FROM min(i.processed_at)) * 1000 AS at
    FROM outbox o JOIN inbox i ON i.event_id = o.id
    WHERE o.created_at >= to_timestamp(${sinceEpochMs / 1000})
  `.execute(environment.database.db);
  const at = rows[0]?.at;
  return at === null || at === undefined ? null : Number(at) - sinceEpochMs;
}

/** One post of the steady traffic, and which replica it went to. */
export interface RoutedPost extends PostOutcome {
  readonly port: number;
}

export interface SteadyPosts {
  /** The posts answered (or failed) so far. */
  readonly outcomes: readonly RoutedPost[];
  /** Stops posting and resolves with every outcome once each post has ended. */
  stop(): Promise<readonly RoutedPost[]>;
}

/** Posts photos at a steady rate, round-robin over the replicas in `rotation`, as a load balancer would. */
export function postSteadily(rotation: ReadonlyMap<string, number>, perSecond: number): SteadyPosts {
  const controller = new AbortController();
  const outcomes: RoutedPost[] = [];
  const pending: Promise<void>[] = [];
  const loop = (async () => {
    const start = performance.now();
    for (let n = 0; !controller.signal.aborted; n++) {
      const wait = start + (n * 1_000) / perSecond - performance.now();
      if (wait > 0) await sleep(wait, controller.signal);
      const ports = [...rotation.values()];
      const port = ports[n % ports.length];
      if (controller.signal.aborted || port === undefined) continue;
      pending.push(
        postPhotoRequest(port, `fault #${n}`).then((outcome) => void outcomes.push({ ...outcome, port })),
      );
    }
  })();
  return {
    outcomes,
    async stop() {
      controller.abort();
      await loop;
      await Promise.all(pending);
      return outcomes;
    },
  };
}
