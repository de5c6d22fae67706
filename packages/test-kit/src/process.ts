// Without vitest or the TLS helpers: what the drills and the bench load outside a test run.
export { apiPort, DaemonFleet } from "./daemon-fleet.js";
export {
  type DaemonOptions,
  type DaemonProcess,
  type Exit,
  isRunning,
  killRunningDaemons,
  startDaemonProcess,
  startedDaemons,
} from "./daemon-process.js";
export { type FrozenBackends, freezeBackends, thawAllBackends } from "./frozen-backend.js";
export { HANG_LIMIT_MS, type HangWork, hangLimit } from "./hang-limits.js";
export { commitOrderInversions, judgeKeyOrder, type KeyedEvent, type KeyOrder } from "./key-order.js";
export { collectLogLines, type LogLine } from "./log-lines.js";
export { type DrainedMessage, drainQueue, drainUntil } from "./queues.js";
export {
  type CommittedTransaction,
  type RaceOutcome,
  type RacingPlan,
  raceProducers,
} from "./racing-producers.js";
export { randomSeed, seededRandom } from "./random.js";
export { repoPath, TSX_IMPORT } from "./repo-path.js";
export { type WaitOptions, type WatchedProcess, waitUntil } from "./wait-until.js";
