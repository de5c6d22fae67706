export * from "./checks.js";
export {
  collectLogLines,
  type DaemonProcess,
  type Exit,
  type LogLine,
  repoPath,
  startDaemonProcess,
} from "./daemon-process.js";
export { type DrillContext, type DrillScale, drillContext, fullScale, testScale } from "./drill-context.js";
export { allPassed, renderTable, type ScenarioResult } from "./report.js";
export { runChaos } from "./scenarios/chaos.js";
export { defaultDrills, drills, runDrills } from "./scenarios/index.js";
export { runRollingRestart } from "./scenarios/rolling-restart.js";
export { runSigkillDrill } from "./scenarios/sigkill.js";
export { runStopDrill } from "./scenarios/stop-drill.js";
