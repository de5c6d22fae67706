export {
  createLongPollSqsClient,
  createS3Client,
  createSnsClient,
  createSqsClient,
  endpointFor,
} from "./aws/aws-clients.js";
export { missingObjectCode, objectExists, type S3Client } from "./aws/object-exists.js";
export { isTopicArn } from "./aws/topic-arn.js";
export { hasControlCharacter, isTimestampWithZone, isUuid } from "./cli/input-checks.js";
export { renderTable } from "./cli/render-table.js";
export { forTerminal } from "./cli/terminal-text.js";
export {
  awsSettings,
  commonSettings,
  databaseSettings,
  s3EndpointSettings,
} from "./config/common-settings.js";
export {
  ConfigError,
  type ConfigProblem,
  refuseOptions,
  reportConfigErrors,
} from "./config/config-error.js";
export {
  numericOption,
  optionValues,
  positiveOption,
  settingDefault,
} from "./config/library-options.js";
export { loadConfig, readConfig } from "./config/load-config.js";
export { renderConfigTable, withConfigTable } from "./config/render-config-table.js";
export { type ConfigOf, type Setting, type SettingsSpec, setting } from "./config/setting.js";
export {
  brokenRules,
  budgetRules,
  notAbove,
  type SettingNames,
  type SettingRule,
  type TimeoutRule,
} from "./config/setting-rules.js";
export type { SettingsInCode } from "./config/settings-in-code.js";
export {
  type BudgetRule,
  findBudgetProblems,
  type Timeout,
} from "./config/timeout-budget.js";
export { ClientConnection, kyselyOn, transactionOn } from "./db/client-kysely.js";
export { configuredConnection } from "./db/configured-connection.js";
export { connectionBounds, isQueryReadTimeout } from "./db/connection-bounds.js";
export {
  createDatabase,
  type DatabaseHandle,
  type DatabaseSettings,
  type PlanCacheMode,
} from "./db/create-database.js";
export { type DatabaseClientConfig, newDatabaseClient } from "./db/database-client.js";
export { type DatabaseSsl, plainTextConnection } from "./db/database-tls.js";
export {
  beginWithStatementTimeout,
  deadlineConnection,
  deadlineTransaction,
  PostgresUnansweredError,
  TransactionEscapedError,
  TransactionFinishedError,
} from "./db/deadline-transaction.js";
export { EXAMPLE_MIGRATION_TABLE, migrateExampleTables } from "./db/example-migrations.js";
export {
  type ApplyMigrations,
  applyMigrations,
  migrateSettings,
  runMigrateCommand,
} from "./db/migrate-command.js";
export {
  connectionFailureIn,
  connectionLayerFaultIn,
  isQueryCanceled,
  isUniqueViolation,
} from "./db/postgres-errors.js";
export { missingSchemaLine, type ServiceSchema } from "./db/require-schema.js";
export { type RotatingPassword, rotatingPassword } from "./db/rotating-password.js";
export { probedDatabase, viaTransactionPooler } from "./db/transaction-pooler.js";
export { settlesBefore, settlesWithin, sleep, untilAborted } from "./lifecycle/bounded-waits.js";
export { Capacity } from "./lifecycle/capacity.js";
export { DrainDeadline } from "./lifecycle/drain-deadline.js";
export { EXIT_CONFIG, EXIT_CRASH, EXIT_FORCED, EXIT_OK, EXIT_USAGE } from "./lifecycle/exit-codes.js";
export { packageVersion } from "./lifecycle/package-version.js";
export {
  type DaemonTimeouts,
  resolveConfig,
  resolveDaemonConfig,
} from "./lifecycle/resolve-daemon-config.js";
export { type DaemonContext, runDaemon } from "./lifecycle/run-daemon.js";
export { type Periodic, startPeriodic } from "./lifecycle/start-periodic.js";
export { listenForStopRequests, type StopRequests } from "./lifecycle/stop-requests.js";
export { createLogger, type Logger } from "./log/logger.js";
export { coalescedRead, SCRAPE_HOLD_MS } from "./ops/coalesced-read.js";
export { LoopWatch, type LoopWatchSettings } from "./ops/loop-watch.js";
export { createMetricsRegistry } from "./ops/metrics-registry.js";
export { type OpsServer, startOpsServer } from "./ops/ops-server.js";
export { connectionsCheckingInterval } from "./ops/timeout-checks.js";
export { type BackoffPolicy, backoffMs } from "./retry/backoff.js";
export { contextFromHeaders, traceHeaders } from "./telemetry/message-trace-context.js";
export { startTracing } from "./telemetry/start-tracing.js";
export { type TracingConfig, tracingConfig, tracingConfigProblems } from "./telemetry/tracing-config.js";
