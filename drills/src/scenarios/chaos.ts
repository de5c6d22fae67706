import { checkChaos } from "../checks.js";
import type { DrillContext } from "../drill-context.js";
import type { ScenarioResult } from "../report.js";
import { runRestartSeries } from "./restart-series.js";

/** SIGKILLs, a Postgres restart and a bus outage under steady traffic: nothing lost, effects once. */
export async function runChaos(context: DrillContext): Promise<ScenarioResult[]> {
  const outcome = await runRestartSeries(context, { signal: "SIGKILL", postgresRestarts: 1, busOutages: 1 });
  const check = checkChaos({
    ...outcome.delivery,
    lost: outcome.counts.lost,
    kills: outcome.exits.filter((exit) => exit.signal === "SIGKILL").length,
    postgresRestarts: 1,
    busOutages: 1,
    relayResent: outcome.relayResent,
  });
  context.progress(`chaos: ${check.result}`);
  return [
    {
      scenario: "chaos",
      checks: [check],
      figures: { ...outcome },
      durationMs: outcome.durationMs,
      seed: context.seed,
    },
  ];
}
