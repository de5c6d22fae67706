// For operators' tools (the operator console, apps/console): the library functions behind `consumer
// dlq list` and `consumer redrive`, so that a tool lists and moves dead letters through the commands'
// own code (one home each): the same receive-once walk, the same filter, the same send-then-delete.
// Only what the console imports: each name here is one more for the consumer to keep.
export { bounded, type DeadLetter, describeDeadLetter, keptText } from "./cli/dead-letters.js";
export { walkDeadLetters } from "./cli/dlq-list.js";
export { type DlqQueues, queuesFor } from "./cli/open-queues.js";
export { type RedriveSummary, redrive } from "./cli/redrive.js";
export { DEAD_LETTER_ID, matchesFilter } from "./cli/redrive-filter.js";
export { dlqCommandProblems, dlqCommandSettings } from "./settings.js";
