import { performance } from "node:perf_hooks";
import { startEquipmentStub } from "@outbox/devstack";
import { sleep } from "@outbox/shared";
import type { DaemonProcess, Exit } from "@outbox/test-kit/process";
import { apiPort, DaemonFleet } from "@outbox/test-kit/process";
import { sql } from "kysely";
import { checkPhotoChain } from "../checks.js";
import { apiEnv, consumerEnv, relayEnv, sumDrained } from "../daemons.js";
import type { DrillContext } from "../drill-context.js";
import { prepareDrillEnvironment } from "../drill-environment.js";
import { waitForFullDelivery } from "../observe.js";
import { type PostOutcome, postPhotoRequest } from "../post-photos.js";
import type { ScenarioResult } from "../report.js";

type Role = "api-a" | "api-b" | "relay" | "consumer";
const ROUND: readonly Role[] = ["api-a", "relay", "api-b", "consumer"];
const ROUNDS = 2;
/**
 * The deregistration delay: long enough for posts already routed to the replica to reach its
 * listener, with room for a busy machine (the termination-race drill gives its preStop the same).
 */
const DEREGISTRATION_MS = 1_000;

/**
 * The whole chain under a rolling restart: clients post photos to two api replicas (round-robin
 * over the ones in rotation, as a load balancer does), while api, relay and consumer are each
 * restarted with SIGTERM, one at a time. An api replica leaves the rotation before its SIGTERM, the
 * way a deregistration does (the race without that pause is the termination-race drill's subject). Every post must be answered, and its `photo.posted` applied to the
 * feed exactly once: nothing lost, no duplicate skips.
 */
export async function runPhotoChain(context: DrillContext): Promise<ScenarioResult[]> {
  const { progress, scale } = context;
  const started = performance.now();
  const environment = await prepareDrillEnvironment(context, { label: "photo_chain" });
  const stub = await startEquipmentStub();
  const fleet = new DaemonFleet();
  const generation: Record<Role, number> = { "api-a": 0, "api-b": 0, relay: 0, consumer: 0 };
  const launch = (role: Role): DaemonProcess => {
    generation[role] += 1;
    const name = `${role}#${generation[role]}`;
    if (role === "relay") return fleet.relay(name, relayEnv(environment));
    if (role === "consumer") return fleet.consumer(name, consumerEnv(environment, { DRILL_HANDLER_MS: "5" }));
    return fleet.api(name, apiEnv(environment, stub.url));
  };
  const running = new Map<Role, DaemonProcess>();
  const consumerRuns: DaemonProcess[] = [];
  const rotation = new Map<Role, number>();
  const start = async (role: Role) => {
    const daemon = launch(role);
    running.set(role, daemon);
    if (role === "consumer") consumerRuns.push(daemon);
    if (role.startsWith("api")) rotation.set(role, await apiPort(daemon));
    await daemon.waitForLog("started");
  };
  const exits: Exit[] = [];
  const stop = async (role: Role) => {
    const daemon = running.get(role);
    if (!daemon) return;
    // A load balancer stops routing to a deregistered target before the task gets its SIGTERM; the
    // pause stands for that, so posts already sent reach the replica before its listener closes.
    if (rotation.delete(role)) await sleep(DEREGISTRATION_MS);
    exits.push(await daemon.stop("SIGTERM"));
  };

  const postsPerSecond = Math.max(10, Math.round(scale.eventsPerSecond / 5));
  const posts = Math.round((postsPerSecond * scale.seriesDurationMs) / 1_000);
  try {
    await Promise.all((["api-a", "api-b", "relay", "consumer"] as const).map(start));
    progress(
      `posting ${posts} photos at ${postsPerSecond}/s while restarting ${ROUNDS}× ${ROUND.join(", ")}`,
    );
    const outcomes: Promise<PostOutcome>[] = [];
    const seriesStarted = performance.now();
    const producing = (async () => {
      for (let n = 0; n < posts; n++) {
        await sleep(Math.max(0, (n * 1_000) / postsPerSecond - (performance.now() - seriesStarted)));
        const ports = [...rotation.values()];
        const port = ports[n % ports.length];
        if (port === undefined) throw new Error("no api replica in rotation");
        outcomes.push(postPhotoRequest(port, `chain #${n}`));
      }
    })();
    const steps = Array.from({ length: ROUNDS }, () => ROUND).flat();
    for (const [index, role] of steps.entries()) {
      await sleep(
        Math.max(
          0,
          ((index + 1) * scale.seriesDurationMs) / (steps.length + 1) - (performance.now() - seriesStarted),
        ),
      );
      await stop(role);
      await start(role);
      progress(`restarted ${role} → ${running.get(role)?.name}`);
    }
    await producing;
    const answers = await Promise.all(outcomes);
    await waitForFullDelivery(environment, [...running.values()]);
    for (const role of running.keys()) await stop(role);
    const { rows } = await sql<{ events: string; feed: string; lost: string }>`
      SELECT
        (SELECT count(*) FROM outbox WHERE event_type = 'photo.posted') AS events,
        (SELECT count(*) FROM photo_feed) AS feed,
        (SELECT count(*) FROM outbox o WHERE NOT EXISTS (SELECT 1 FROM inbox i WHERE i.event_id = o.id)) AS lost
    `.execute(environment.database.db);
    const row = rows[0];
    const observation = {
      posts,
      posted: answers.filter((answer) => answer.outcome === 201).length,
      events: Number(row?.events ?? 0),
      feed: Number(row?.feed ?? 0),
      lost: Number(row?.lost ?? 0),
      duplicates: sumDrained(consumerRuns, "duplicates"),
      restarts: steps.length,
      exits,
    };
    const check = checkPhotoChain(observation);
    progress(`photo-chain: ${check.result}`);
    return [
      {
        scenario: "photo-chain",
        checks: [check],
        figures: {
          ...observation,
          exits: exits.map((exit) => exit.code),
          failedPosts: answers.filter((answer) => answer.outcome !== 201).map((answer) => answer.outcome),
        },
        durationMs: Math.round(performance.now() - started),
      },
    ];
  } finally {
    await fleet.killAll();
    await stub.close();
    await environment.close();
  }
}
