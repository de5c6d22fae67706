// For operators' tools (the operator console, apps/console): the library functions behind `consumer
// dlq list` and `consumer redrive`, so that a tool lists and moves dead letters through the commands'
// own code (one home each): the same receive-once walk, the same send-then-delete.
export { bounded, type DeadLetter, describeDeadLetter } from "./cli/dead-letters.js";
export { type DeadLetterWalk, walkDeadLetters } from "./cli/dlq-list.js";
export { type DlqQueues, queuesFor } from "./cli/open-queues.js";
export { type RedriveCounts, type RedriveOptions, type RedriveSummary, redrive } from "./cli/redrive.js";
export { matchesFilter, type RedriveFilter } from "./cli/redrive-filter.js";
export { type DlqCommandConfig, dlqCommandProblems, dlqCommandSettings } from "./settings.js";
