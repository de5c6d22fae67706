export { CHECK_ROWS, type CheckRow, checkName, isCheckOf } from "./check-rows.js";
export * from "./checks.js";
export { apiEnv, consumerEnv, relayEnv } from "./daemons.js";
export { DEMO_DRILLS } from "./demo.js";
export { type DrillContext, type DrillScale, drillContext, fullScale, testScale } from "./drill-context.js";
export {
  type DrillReport,
  README_TABLE_END,
  README_TABLE_START,
  readmeBlock,
  readmeTableChecks,
  replaceReadmeBlock,
  rowsProblem,
} from "./readme-table.js";
export { allPassed, renderTable, type ScenarioResult } from "./report.js";
export { type RoundRobinProxy, startRoundRobinProxy } from "./round-robin-proxy.js";
export { runChaos } from "./scenarios/chaos.js";
export { runDeadlineDrill } from "./scenarios/deadline.js";
export { FAILOVER_VARIANTS, type FailoverVariant, runFailoverDrill } from "./scenarios/failover.js";
export { FAULTS, type FaultSpec } from "./scenarios/fault-kinds.js";
export { runFaultsDrill } from "./scenarios/faults.js";
export { runHttpStopDrill } from "./scenarios/http-stop.js";
export { drills, rowsOf, runDrills } from "./scenarios/index.js";
export { runPhotoChain } from "./scenarios/photo-chain.js";
export { runRacingProducers } from "./scenarios/racing-producers.js";
export { runReplayDrill } from "./scenarios/replay.js";
export { runRollingRestart } from "./scenarios/rolling-restart.js";
export { runSigkillDrill } from "./scenarios/sigkill.js";
export { runSlowDependencyDrill } from "./scenarios/slow-dependency.js";
export { runStopDrill } from "./scenarios/stop-drill.js";
export { runTerminationRace } from "./scenarios/termination-race.js";
