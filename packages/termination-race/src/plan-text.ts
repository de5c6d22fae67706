import type { Plan } from "./planner.js";
import { describeDrops } from "./race-text.js";
import { secondsText } from "./seconds-text.js";
import type { StopOutcome } from "./simulate-stop.js";
import { describeSettings, TICK_MS } from "./stop-settings.js";

/** A worker serves no requests: what matters is whether its drain ends before SIGKILL. */
function outcomeText(plan: Plan, outcome: StopOutcome): string {
  if (plan.mode === "service") return describeDrops(outcome.requests);
  return outcome.drainsCut > 0 ? "cut by SIGKILL" : "finishes before SIGKILL";
}

function outcomeRow(plan: Plan, label: string, outcome: StopOutcome, settings: Plan["given"]): string {
  return `| ${label}: ${describeSettings(settings)} | ${outcomeText(plan, outcome)} | ${outcome.drainsCut} |`;
}

function heading(plan: Plan): string {
  const { input } = plan;
  const margin = `margin ${secondsText(plan.marginMs)}`;
  if (input.mode === "worker") {
    return `${input.platform} worker (no load balancer): drain ${secondsText(input.drainMs)}, ${margin}`;
  }
  return `${input.platform}: propagation ${secondsText(input.propagationMs)}, longest request ${secondsText(input.longestRequestMs)}, drain ${secondsText(input.drainMs)}, ${margin}`;
}

function simulated(plan: Plan): string[] {
  const { traffic } = plan;
  if (traffic === undefined) {
    return [
      "simulated: the worker's stop when its drain takes its whole budget; the work it holds is cut when SIGKILL lands before the drain ends",
      "",
      "| settings | its drain | drains cut |",
    ];
  }
  return [
    `simulated: one of ${traffic.replicas} replicas stops under steady traffic (${traffic.requestsPerTick * (1000 / TICK_MS)} requests/s); a drain is cut when SIGKILL lands before the app's own stop ends`,
    "",
    "| settings | requests | drains cut |",
  ];
}

/** The plan as the `pnpm plan` command prints it: the recommended numbers with reasons, then the simulation. */
export function renderPlan(plan: Plan): string {
  const width = Math.max(...plan.reasons.map((r) => r.setting.length));
  const lines = [
    heading(plan),
    "",
    "recommended:",
    ...plan.reasons.map(
      (r) => `  ${r.setting.padEnd(width)}  ${String(r.seconds).padStart(4)} s  ${r.reason}`,
    ),
    "",
    ...simulated(plan),
    "|---|---|---|",
    outcomeRow(
      plan,
      plan.givenIsDefault ? "given (platform defaults)" : "given",
      plan.outcomes.given,
      plan.given,
    ),
    outcomeRow(plan, "recommended", plan.outcomes.recommended, plan.recommended),
  ];
  return lines.join("\n");
}
