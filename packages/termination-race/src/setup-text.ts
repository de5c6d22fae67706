import { explainRun } from "./race-explanation.js";
import type { RacePlatform, RaceSetup, SetupRun } from "./race-setup.js";
import { describeCounts, renderLog } from "./race-text.js";
import { renderTimeline, TIMELINE_LEGEND } from "./timeline-text.js";

/** Each order's names for its two stop numbers. */
const STOP_NUMBERS: Readonly<Record<RacePlatform, readonly [string, string]>> = {
  document: ["preStop", "grace after SIGTERM"],
  k8s: ["preStop", "terminationGracePeriod"],
  ecs: ["deregistration delay", "stopTimeout"],
};

/** The setup in one line, each number under its platform's name. */
export function describeSetup(setup: RaceSetup): string {
  const [preStop, grace] = STOP_NUMBERS[setup.platform];
  const stop = `${preStop} ${setup.preStop}, ${grace} ${setup.grace}`;
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
    describeCounts(run.counts),
    explainRun(run),
    "",
    "what happened:",
    ...renderLog(run.log).map((line) => `  ${line}`),
  ];
}
