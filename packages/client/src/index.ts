export type { ClaimCheck } from "./claim-check/claim-check.js";
export {
  decodePointer,
  EXTENDED_PAYLOAD_SIZE_ATTRIBUTE,
  encodePointer,
  LEGACY_PAYLOAD_SIZE_ATTRIBUTE,
  PAYLOAD_SIZE_ATTRIBUTES,
  type PayloadPointer,
  pointerUri,
} from "./claim-check/payload-pointer.js";
export {
  type BatchHandler,
  type ConsumedEvent,
  defineBatchHandler,
  defineHandlers,
  type EventHandler,
  type EventMap,
  type HandlerContext,
  type HandlerEntry,
  type HandlerMap,
  type HandlerSet,
  type HandlerSetOptions,
  isBatchHandler,
  isPoisonMessageError,
  type ParsingHandler,
  PoisonMessageError,
} from "./consumer/handlers.js";
export type { Migration, MigrationResult, MigratorLike } from "./db/kysely-migrator.js";
export {
  MigrationError,
  type MigrationSet,
  migrateSetToLatest,
  pendingMigrationsIn,
  runMigrator,
} from "./db/migration-set.js";
/** Every outbox/inbox migration in order, for an application that runs them with its own kysely `Migrator`. */
export { migrations } from "./db/migrations/index.js";
export { migrateToLatest, pendingMigrations } from "./db/outbox-migrations.js";
export type {
  InboxRow,
  InboxTable,
  NewOutboxRow,
  OutboxRow,
  OutboxTable,
  OutboxTables,
} from "./db/schema.js";
export { Deadline, DeadlineExceededError, type FollowingDeadline } from "./deadline/deadline.js";
export { deadlineFetch, incomingDeadline, REQUEST_TIMEOUT_HEADER } from "./deadline/request-timeout.js";
export type { ClientLogger, LogFunction } from "./log/client-logger.js";
export { describeError, type ThrownParts, thrownParts } from "./log/describe-error.js";
export { enqueue, enqueueWith, type NewEvent, OutboxValidationError } from "./outbox/enqueue.js";
export type { EnqueueOptions } from "./outbox/enqueue-options.js";
export {
  EVENT_ID_ATTRIBUTE,
  EVENT_TYPE_ATTRIBUTE,
  isTopicMessageLimit,
  MAX_BATCH_ENTRIES,
  MAX_MESSAGE_ATTRIBUTES,
  MAX_MESSAGE_BYTES,
  MAX_TOPIC_MESSAGE_BYTES,
  MAX_VISIBILITY_SECONDS,
  MIN_TOPIC_MESSAGE_BYTES,
  REPLAY_ATTRIBUTE,
} from "./outbox/message-contract.js";
export { orderingKeyLock } from "./outbox/ordering-key-lock.js";
export {
  headersProblem,
  type MessageSize,
  measureMessage,
  messageAttributes,
} from "./outbox/sns-message.js";
export { uuidv7 } from "./outbox/uuidv7.js";
export {
  INSERT_IN_FLIGHT_LOCK,
  ORDERING_KEY_LOCK_SPACE,
  OUTBOX_CHANNEL,
  OUTBOX_LOCK_SPACE,
  RELAY_ASLEEP_LOCK,
} from "./protocol.js";
export { MessagingAttributes, OutboxAttributes } from "./telemetry/messaging-attributes.js";
