export {
  type EnqueuedEvent,
  type EnqueuedEventOf,
  type EnqueuedFilter,
  enqueuedEvents,
  type OutboxMark,
  type OutboxReader,
  outboxMark,
  type QueryExecutor,
} from "./enqueued-events.js";
