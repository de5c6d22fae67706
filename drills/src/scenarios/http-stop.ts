import { performance } from "node:perf_hooks";
import { startEquipmentStub } from "@outbox/devstack";
import type { LogLine } from "@outbox/test-kit/process";
import { apiPort, DaemonFleet } from "@outbox/test-kit/process";
import { checkHttpSigkill, checkHttpSigterm, type HttpStopObservation } from "../checks.js";
import { apiEnv } from "../daemons.js";
import type { DrillContext } from "../drill-context.js";
import { type DrillEnvironment, prepareDrillEnvironment } from "../drill-environment.js";
import { countCommittedPhotos, postPhotoRequest } from "../post-photos.js";
import type { ScenarioResult } from "../report.js";
import { apiHoldsRequests } from "./moments.js";

/** The source document's figures: 8 requests, each waiting 3 s before its commit. */
const REQUESTS = 8;
const HOLD_MS = 3_000;

interface StopRun {
  readonly observation: HttpStopObservation;
  readonly stopMs: number;
  /** The `graceful shutdown complete` line, or its warning; undefined when neither was logged. */
  readonly shutdown: LogLine | undefined;
}

async function stopWithRequestsInFlight(
  fleet: DaemonFleet,
  environment: DrillEnvironment,
  equipmentUrl: string,
  signal: "SIGTERM" | "SIGKILL",
): Promise<StopRun> {
  const api = fleet.apiHoldingCommits(`api (${signal})`, apiEnv(environment, equipmentUrl), HOLD_MS);
  const port = await apiPort(api);
  const requests = Array.from({ length: REQUESTS }, (_, index) =>
    postPhotoRequest(port, `${signal} #${index + 1}`),
  );
  await apiHoldsRequests(api, REQUESTS);
  const exit = await api.stop(signal);
  const outcomes = (await Promise.all(requests)).map((request) => request.outcome);
  const shutdown = api.lines.find(
    (line) =>
      line.msg === "graceful shutdown complete" ||
      line.msg === "graceful shutdown cut requests at the drain deadline",
  );
  const committed = await countCommittedPhotos(environment, signal);
  return {
    observation: {
      inFlight: REQUESTS,
      holdMs: HOLD_MS,
      outcomes,
      committedPhotos: committed.photos,
      committedEvents: committed.events,
      exit,
    },
    stopMs: exit.stopMs,
    shutdown,
  };
}

/**
 * The document's HTTP rows: 8 requests in flight, each held 3 s before its commit, then SIGTERM —
 * all 8 answer 201 and commit, `clean=true`, exit 0; then the same with SIGKILL for comparison —
 * all 8 cut, nothing committed.
 */
export async function runHttpStopDrill(context: DrillContext): Promise<ScenarioResult[]> {
  const { progress } = context;
  const environment = await prepareDrillEnvironment(context, { label: "http_stop" });
  const stub = await startEquipmentStub();
  const fleet = new DaemonFleet();
  try {
    const termStarted = performance.now();
    const term = await stopWithRequestsInFlight(fleet, environment, stub.url, "SIGTERM");
    const termCheck = checkHttpSigterm({
      ...term.observation,
      shutdown: term.shutdown
        ? { clean: term.shutdown.clean === true, cut: Number(term.shutdown.cut) }
        : null,
    });
    progress(`http-sigterm: ${termCheck.result}`);
    const termResult: ScenarioResult = {
      scenario: "http-sigterm",
      checks: [termCheck],
      figures: { ...term.observation, stopMs: term.stopMs, shutdown: term.shutdown },
      durationMs: Math.round(performance.now() - termStarted),
    };

    const killStarted = performance.now();
    const kill = await stopWithRequestsInFlight(fleet, environment, stub.url, "SIGKILL");
    const killCheck = checkHttpSigkill(kill.observation);
    progress(`http-sigkill: ${killCheck.result}`);
    return [
      termResult,
      {
        scenario: "http-sigkill",
        checks: [killCheck],
        figures: { ...kill.observation },
        durationMs: Math.round(performance.now() - killStarted),
      },
    ];
  } finally {
    await fleet.killAll();
    await stub.close();
    await environment.close();
  }
}
