import { checkRollingRestart } from "../checks.js";
import type { DrillContext } from "../drill-context.js";
import type { ScenarioResult } from "../report.js";
import { runRestartSeries } from "./restart-series.js";

/** Restarts with SIGTERM at random moments under steady traffic: nothing lost, nothing repeated. */
export async function runRollingRestart(context: DrillContext): Promise<ScenarioResult[]> {
  const outcome = await runRestartSeries(context, { signal: "SIGTERM", postgresRestarts: 0, busOutages: 0 });
  const check = checkRollingRestart({
    ...outcome.delivery,
    lost: outcome.counts.lost,
    exits: outcome.exits,
    stopMs: outcome.stopMs,
  });
  context.progress(`rolling-restart: ${check.result}`);
  return [
    {
      scenario: "rolling-restart",
      checks: [check],
      figures: { ...outcome },
      durationMs: outcome.durationMs,
      seed: context.seed,
    },
  ];
}
