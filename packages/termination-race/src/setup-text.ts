import { explainRun } from "./race-explanation.js";
import type { RaceSetup, SetupRun } from "./race-setup.js";
import { describeDrops, renderLog } from "./race-text.js";
import { renderTimeline, TIMELINE_LEGEND } from "./timeline-text.js";

/** The setup in one line, each number under its platform's name. */
export function describeSetup(setup: RaceSetup): string {
  const stop =
    setup.platform === "k8s"
      ? `preStop ${setup.preStop}, terminationGracePeriod ${setup.grace}`
      : `deregistration delay ${setup.preStop}, stopTimeout ${setup.grace}`;
  return `${setup.platform}: propagation ${setup.propagation}, work ${setup.work}, ${setup.rate} requests per tick, ${setup.replicas} replica${setup.replicas === 1 ? "" : "s"}; ${stop} (ticks)`;
}

/** One run as `pnpm simulate` prints it: the setup, the timeline, the counts, the explanation, the log. */
export function renderRun(run: SetupRun): string[] {
  return [
    `${describeSetup(run.setup)}; pod-1 stopped at t=${run.stopAt}, ${run.ticks} ticks`,
    "",
    ...renderTimeline(run.frames),
    TIMELINE_LEGEND,
    "",
    `served ${run.counts.served}, ${describeDrops(run.counts)}`,
    explainRun(run),
    "",
    "what happened:",
    ...renderLog(run.log).map((line) => `  ${line}`),
  ];
}
