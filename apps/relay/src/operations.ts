// For operators' tools (the operator console, apps/console): the library functions behind `relay
// status`, `relay requeue-dead`, `relay skip-dead` and `relay republish`, so that a tool acts through
// the commands' own code (one home each), and the predicates its own reads must state to be served
// by the indexes.

export {
  type RepublishOutcome,
  type RepublishRefusal,
  type WorkRunDeps,
  workRepublish,
} from "./cli/republish.js";
export { type ReapplyGuard, type RepublishRequest, timestampWithZone } from "./cli/republish-options.js";
export { listRuns, type RepublishRun, rowsLeft } from "./cli/republish-runs.js";
export { type RequeueOutcome, requeueDeadRows } from "./cli/requeue-dead.js";
export { skipDeadRows } from "./cli/skip-dead.js";
export {
  type BlockedKey,
  type RelayStatus,
  readStatus,
  type ScheduledStatus,
  type TopicStatus,
} from "./cli/status.js";
export { holdsItsKey } from "./dead-heads.js";
export { notDueYet } from "./scheduled-rows.js";
export {
  publishTimeoutMs,
  REPUBLISH_DEFAULT_RATE,
  republishSettings,
  requeueDeadSettings,
} from "./settings.js";
export { createSnsPublisher } from "./sns/publisher.js";
export { topicRoutingProblems } from "./topic-routing.js";
