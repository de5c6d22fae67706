import type { Plan } from "./planner.js";
import { describeDrops } from "./race-text.js";
import { secondsText } from "./seconds-text.js";
import type { StopOutcome } from "./simulate-stop.js";
import { describeSettings, TICK_MS } from "./stop-settings.js";

function outcomeRow(label: string, outcome: StopOutcome, settings: Plan["given"]): string {
  const { requests } = outcome;
  return `| ${label}: ${describeSettings(settings)} | ${describeDrops(requests)} | ${outcome.drainsCut} |`;
}

/** The plan as the `pnpm plan` command prints it: the recommended numbers with reasons, then the simulation. */
export function renderPlan(plan: Plan): string {
  const { input } = plan;
  const { traffic } = plan;
  const width = Math.max(...plan.reasons.map((r) => r.setting.length));
  const lines = [
    `${input.platform}: propagation ${secondsText(input.propagationMs)}, longest request ${secondsText(input.longestRequestMs)}, drain ${secondsText(input.drainMs)}, margin ${secondsText(plan.marginMs)}`,
    "",
    "recommended:",
    ...plan.reasons.map(
      (r) => `  ${r.setting.padEnd(width)}  ${String(r.seconds).padStart(4)} s  ${r.reason}`,
    ),
    ...plan.warnings.map((warning) => `  warning: ${warning}`),
    "",
    `simulated: one of ${traffic.replicas} replicas stops under steady traffic (${traffic.requestsPerTick * (1000 / TICK_MS)} requests/s); a drain is cut when SIGKILL lands before the app's own stop ends`,
    "",
    "| settings | requests | drains cut |",
    "|---|---|---|",
    outcomeRow(plan.givenIsDefault ? "given (platform defaults)" : "given", plan.outcomes.given, plan.given),
    outcomeRow("recommended", plan.outcomes.recommended, plan.recommended),
  ];
  return lines.join("\n");
}
