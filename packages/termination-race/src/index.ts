export { DEMO } from "./demo.js";
export { type DemoCell, demoGrid, runDemoCell } from "./demo-grid.js";
export { renderDemoGrid } from "./demo-grid-text.js";
export { renderPlan } from "./plan-text.js";
export {
  DEFAULT_MARGIN_MS,
  type Plan,
  type PlanInput,
  type PlanMode,
  plan,
  type Recommendation,
  type ServicePlanInput,
  type WorkerPlanInput,
} from "./planner.js";
export { gracePreset, preStopPreset } from "./presets.js";
export {
  type LogEntry,
  type RaceCounts,
  type RaceEvent,
  type ReplicaState,
  type ReplicaTick,
  TerminationRace,
  type TickFrame,
  type Workload,
} from "./race.js";
export { explainRun } from "./race-explanation.js";
export {
  DEFAULT_SETUP,
  planFor,
  RACE_PLATFORMS,
  type RacePlatform,
  type RaceSetup,
  recommendFor,
  runSetup,
  SETUP_FIELDS,
  type SetupRun,
  scheduleOf,
  setupProblem,
} from "./race-setup.js";
export { describeCounts, describeDrops, describeEntry, renderLog } from "./race-text.js";
export { type RaceOutcome, type RaceScenario, runRace } from "./run-race.js";
export { secondsText } from "./seconds-text.js";
export { describeSetup, renderRun } from "./setup-text.js";
export {
  type AppTiming,
  DEFAULT_TRAFFIC,
  type StopOutcome,
  simulateDrainWindow,
  simulateStop,
  type Traffic,
} from "./simulate-stop.js";
export {
  documentSchedule,
  ecsBehindAlbSchedule,
  ecsWorkerSchedule,
  kubernetesSchedule,
  type RaceConfig,
  type StopSchedule,
} from "./stop-schedule.js";
export {
  describeSettings,
  FARGATE_MAX_STOP_TIMEOUT_SECONDS,
  KUBERNETES_HOOK_OVERRUN_EXTENSION_MS,
  PLATFORM_DEFAULTS,
  type Platform,
  type StopSettings,
  sigtermToKillMs,
  TICK_MS,
  ticks,
} from "./stop-settings.js";
export { renderTimeline, STATE_CHARACTERS, TIMELINE_LEGEND } from "./timeline-text.js";
