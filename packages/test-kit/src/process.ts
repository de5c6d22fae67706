// Without vitest or the TLS helpers: what the drills and the bench load outside a test run.
export { apiPort, DaemonFleet, EXAMPLE_HANDLERS_MODULE } from "./daemon-fleet.js";
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
export { collectLogLines, type LogLine } from "./log-lines.js";
export { type DrainedMessage, drainQueue } from "./queues.js";
export { repoPath, TSX_IMPORT } from "./repo-path.js";
export { type WaitOptions, waitUntil } from "./wait-until.js";
