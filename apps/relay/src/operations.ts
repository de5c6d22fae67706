// For operators' tools (the operator console, apps/console): the library functions behind `relay
// status`, `relay requeue-dead`, `relay skip-dead` and `relay republish`, so that a tool reads and
// acts through the commands' own code (one home each). Only what the console imports: each name
// here is one more for the relay to keep.

export {
  type RepublishRefusal,
  runDeps,
  type WorkRunDeps,
  workRepublish,
} from "./cli/republish.js";
export type { RepublishRequest } from "./cli/republish-options.js";
export { listRuns, type RepublishRun, readRun, rowsLeft } from "./cli/republish-runs.js";
export {
  LATER_NAMED,
  type RequeueCandidate,
  type RequeueFate,
  requeueCandidates,
  requeueDeadRows,
  requeueFate,
} from "./cli/requeue-dead.js";
export { skipDeadRows } from "./cli/skip-dead.js";
export { type BlockedKey, deadRowsTotal, readBlockedKeys } from "./cli/status.js";
export { REPUBLISH_DEFAULT_RATE, republishSettings } from "./settings.js";
export { topicRoutingProblems } from "./topic-routing.js";
