export * from "./checks.js";
export {
  collectLogLines,
  type DaemonProcess,
  type Exit,
  type LogLine,
  repoPath,
  startDaemonProcess,
} from "./daemon-process.js";
export { apiEnv, apiPort, consumerEnv, DaemonFleet, relayEnv } from "./daemons.js";
export { type DrillContext, type DrillScale, drillContext, fullScale, testScale } from "./drill-context.js";
export { allPassed, renderTable, type ScenarioResult } from "./report.js";
export { type RoundRobinProxy, startRoundRobinProxy } from "./round-robin-proxy.js";
export { runChaos } from "./scenarios/chaos.js";
export { runDeadlineDrill } from "./scenarios/deadline.js";
export { runHttpStopDrill } from "./scenarios/http-stop.js";
export { drills, runDrills } from "./scenarios/index.js";
export { runPhotoChain } from "./scenarios/photo-chain.js";
export { runRollingRestart } from "./scenarios/rolling-restart.js";
export { runSigkillDrill } from "./scenarios/sigkill.js";
export { runSlowDependencyDrill } from "./scenarios/slow-dependency.js";
export { runStopDrill } from "./scenarios/stop-drill.js";
export { runTerminationRace } from "./scenarios/termination-race.js";
export { waitUntil } from "./wait-until.js";
