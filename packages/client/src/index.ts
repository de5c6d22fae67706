/**
 * What an application imports: exactly the names packages/client/README.md documents under "API"
 * (test/packaging/public-surface.test.ts holds the two to each other). What the daemons share with
 * each other is in ./internal.ts, not here: a change there is not a breaking change for an application.
 */
export type { ClaimCheck } from "./claim-check/claim-check.js";
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
} from "./db/migration-set.js";
/** Every outbox/inbox migration in order, for an application that runs them with its own kysely `Migrator`. */
export { migrations } from "./db/migrations/index.js";
export { migrateToLatest, pendingMigrations } from "./db/outbox-migrations.js";
export type {
  DatabaseOf,
  InboxRow,
  InboxTable,
  KyselyInstance,
  NewOutboxRow,
  OutboxDatabase,
  OutboxRow,
  OutboxTable,
  OutboxTables,
} from "./db/schema.js";
export { Deadline, DeadlineExceededError, type FollowingDeadline } from "./deadline/deadline.js";
export { deadlineFetch, incomingDeadline, REQUEST_TIMEOUT_HEADER } from "./deadline/request-timeout.js";
export type { ClientLogger, LogFunction } from "./log/client-logger.js";
export { enqueue, enqueueWith, type NewEvent, OutboxValidationError } from "./outbox/enqueue.js";
export type { EnqueueOptions } from "./outbox/enqueue-options.js";
export { enqueuePg, type PgQueryable } from "./outbox/enqueue-pg.js";
export { EVENT_ID_ATTRIBUTE, EVENT_TYPE_ATTRIBUTE } from "./outbox/message-contract.js";
export { uuidv7 } from "./outbox/uuidv7.js";
