import type { CheckRow } from "../check-rows.js";
import type { DrillContext } from "../drill-context.js";
import type { ScenarioResult } from "../report.js";
import { runChaos } from "./chaos.js";
import { runClaimCheckDrill } from "./claim-check.js";
import { runDeadlineDrill } from "./deadline.js";
import { FAILOVER_VARIANTS, runFailoverDrill } from "./failover.js";
import { FAULTS } from "./fault-kinds.js";
import { runFaultsDrill } from "./faults.js";
import { runHttpStopDrill } from "./http-stop.js";
import { runPhotoChain } from "./photo-chain.js";
import { runRacingProducers } from "./racing-producers.js";
import { runReplayDrill } from "./replay.js";
import { runRollingRestart } from "./rolling-restart.js";
import { runSigkillDrill } from "./sigkill.js";
import { runSlowDependencyDrill } from "./slow-dependency.js";
import { runStopDrill } from "./stop-drill.js";
import { runTerminationRace } from "./termination-race.js";

/** A drill and the rows it reports, in order: one ScenarioResult's checks after another. */
interface Drill {
  readonly run: (context: DrillContext) => Promise<ScenarioResult[]>;
  readonly rows: readonly CheckRow[];
}

// The source document's three rows are one sequence on one backlog, and so are the photo service's
// SIGTERM and its SIGKILL comparison: each name of such a drill runs it (once) and reports all its rows.
const stopDrill: Drill = { run: runStopDrill, rows: ["relaySigterm", "consumerSigterm", "restartDrain"] };
const httpStopDrill: Drill = { run: runHttpStopDrill, rows: ["httpSigterm", "httpSigkill"] };

/** Every drill by name. */
export const drills: Readonly<Record<string, Drill>> = {
  "relay-sigterm": stopDrill,
  "consumer-sigterm": stopDrill,
  "restart-drain": stopDrill,
  sigkill: { run: runSigkillDrill, rows: ["sigkill"] },
  "rolling-restart": { run: runRollingRestart, rows: ["rollingRestart"] },
  chaos: { run: runChaos, rows: ["chaos"] },
  "http-sigterm": httpStopDrill,
  "http-sigkill": httpStopDrill,
  "slow-dependency": { run: runSlowDependencyDrill, rows: ["slowDependency"] },
  deadline: { run: runDeadlineDrill, rows: ["deadline"] },
  "photo-chain": { run: runPhotoChain, rows: ["photoChain"] },
  "termination-race": { run: runTerminationRace, rows: ["terminationRace"] },
  faults: { run: (context) => runFaultsDrill(context), rows: FAULTS.map(() => "fault" as const) },
  replay: { run: runReplayDrill, rows: ["replay"] },
  "claim-check": { run: runClaimCheckDrill, rows: ["claimCheck"] },
  "racing-producers": { run: runRacingProducers, rows: ["racingProducers"] },
  failover: {
    run: (context) => runFailoverDrill(context),
    rows: FAILOVER_VARIANTS.map(() => "failover" as const),
  },
};

/** The named drills, each underlying drill once, in order; unknown names are an error. */
function drillsNamed(names: readonly string[]): Drill[] {
  const unknown = names.filter((name) => !(name in drills));
  if (unknown.length > 0) {
    throw new Error(`unknown drill ${unknown.join(", ")}; known: ${Object.keys(drills).join(", ")}`);
  }
  return [...new Set(names.map((name) => drills[name] as Drill))];
}

/** The acceptance table's rows that running these drills gives, in order, without running them. */
export function rowsOf(names: readonly string[]): CheckRow[] {
  return drillsNamed(names).flatMap((drill) => drill.rows);
}

/**
 * Runs the named drills in order, each underlying drill once. A drill that reports other rows than
 * it declares is a bug, and the declaration is what the README's table is checked against: it stops the run.
 */
export async function runDrills(context: DrillContext, names: readonly string[]): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const drill of drillsNamed(names)) {
    context.progress(`── ${names.find((name) => drills[name] === drill)}`);
    const reported = await drill.run(context);
    const rows = reported.flatMap((result) => result.checks.map((check) => check.row));
    if (rows.join() !== drill.rows.join()) {
      throw new Error(`a drill reported the rows ${rows.join(", ")}, but declares ${drill.rows.join(", ")}`);
    }
    results.push(...reported);
  }
  return results;
}
