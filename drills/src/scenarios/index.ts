import type { DrillContext } from "../drill-context.js";
import type { ScenarioResult } from "../report.js";
import { runChaos } from "./chaos.js";
import { runClaimCheckDrill } from "./claim-check.js";
import { runDeadlineDrill } from "./deadline.js";
import { runFailoverDrill } from "./failover.js";
import { runFaultsDrill } from "./faults.js";
import { runHttpStopDrill } from "./http-stop.js";
import { runPhotoChain } from "./photo-chain.js";
import { runReplayDrill } from "./replay.js";
import { runRollingRestart } from "./rolling-restart.js";
import { runSigkillDrill } from "./sigkill.js";
import { runSlowDependencyDrill } from "./slow-dependency.js";
import { runStopDrill } from "./stop-drill.js";
import { runTerminationRace } from "./termination-race.js";

type Drill = (context: DrillContext) => Promise<ScenarioResult[]>;

/**
 * Every drill by name. The source document's three rows are one sequence on one backlog, so
 * `relay-sigterm`, `consumer-sigterm` and `restart-drain` all run it (once) and report all three.
 */
export const drills: Readonly<Record<string, Drill>> = {
  "relay-sigterm": runStopDrill,
  "consumer-sigterm": runStopDrill,
  "restart-drain": runStopDrill,
  sigkill: runSigkillDrill,
  "rolling-restart": runRollingRestart,
  chaos: runChaos,
  // The photo service's rows: SIGTERM and its SIGKILL comparison are one drill, like the above.
  "http-sigterm": runHttpStopDrill,
  "http-sigkill": runHttpStopDrill,
  "slow-dependency": runSlowDependencyDrill,
  deadline: runDeadlineDrill,
  "photo-chain": runPhotoChain,
  "termination-race": runTerminationRace,
  faults: runFaultsDrill,
  replay: runReplayDrill,
  "claim-check": runClaimCheckDrill,
  failover: runFailoverDrill,
};

/** Runs the named drills in order, each underlying drill once. */
export async function runDrills(context: DrillContext, names: readonly string[]): Promise<ScenarioResult[]> {
  const unknown = names.filter((name) => !(name in drills));
  if (unknown.length > 0) {
    throw new Error(`unknown drill ${unknown.join(", ")}; known: ${Object.keys(drills).join(", ")}`);
  }
  const seen = new Set<Drill>();
  const results: ScenarioResult[] = [];
  for (const name of names) {
    const drill = drills[name];
    if (!drill || seen.has(drill)) continue;
    seen.add(drill);
    context.progress(`── ${name}`);
    results.push(...(await drill(context)));
  }
  return results;
}
