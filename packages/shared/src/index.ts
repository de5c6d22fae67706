export {
  type AwsClientSettings,
  createLongPollSqsClient,
  createSnsClient,
  createSqsClient,
  endpointFor,
} from "./aws/aws-clients.js";
export { isTopicArn } from "./aws/topic-arn.js";
export {
  awsSettings,
  commonSettings,
  databaseSettings,
  RDS_CA_BUNDLE_PATH,
} from "./config/common-settings.js";
export {
  ConfigError,
  type ConfigProblem,
  configErrorText,
  reportConfigErrors,
} from "./config/config-error.js";
export { formerNamesIn, loadConfig } from "./config/load-config.js";
export { numericOption } from "./config/numeric-option.js";
export {
  CONFIG_TABLE_END,
  CONFIG_TABLE_START,
  renderConfigTable,
  withConfigTable,
} from "./config/render-config-table.js";
export { type ConfigOf, type Setting, type SettingsSpec, setting } from "./config/setting.js";
export {
  assertTimeoutBudget,
  type BudgetRule,
  describeTimeouts,
  findBudgetProblems,
  mustNotExceed,
  type SettingValue,
  type Timeout,
} from "./config/timeout-budget.js";
export { ClientConnection, kyselyOn } from "./db/client-kysely.js";
export {
  type ConnectionBounds,
  connectionBounds,
  createDatabase,
  type DatabaseClientConfig,
  type DatabaseHandle,
  type DatabaseSettings,
  type DatabaseSsl,
  type DatabaseSslMode,
  isQueryReadTimeout,
  type PlanCacheMode,
} from "./db/create-database.js";
export {
  beginWithStatementTimeout,
  deadlineConnection,
  deadlineTransaction,
  PostgresUnansweredError,
} from "./db/deadline-transaction.js";
export {
  EXAMPLE_MIGRATION_LOCK_TABLE,
  EXAMPLE_MIGRATION_TABLE,
  exampleMigrations,
  migrateExampleTables,
} from "./db/example-migrations.js";
export {
  type ApplyMigrations,
  applyMigrations,
  migrateSettings,
  type OptionalMigrations,
  runMigrateCommand,
} from "./db/migrate-command.js";
export { isQueryCanceled, isUniqueViolation } from "./db/postgres-errors.js";
export { missingSchemaLine, type ServiceSchema } from "./db/require-schema.js";
export { settlesBefore, settlesWithin, sleep, untilAborted } from "./lifecycle/bounded-waits.js";
export { EXIT_CONFIG, EXIT_CRASH, EXIT_FORCED, EXIT_OK, EXIT_USAGE } from "./lifecycle/exit-codes.js";
export { packageVersion } from "./lifecycle/package-version.js";
export {
  type ConfigChecks,
  commonTimeoutRules,
  type DaemonTimeouts,
  resolveConfig,
  resolveDaemonConfig,
} from "./lifecycle/resolve-daemon-config.js";
export {
  type DaemonContext,
  type DaemonDefinition,
  type DrainSummary,
  runDaemon,
  type Worker,
} from "./lifecycle/run-daemon.js";
export { type Periodic, type PeriodicOptions, startPeriodic } from "./lifecycle/start-periodic.js";
export { createLogger, type Logger, type LoggerSettings } from "./log/logger.js";
export { maskSecretsInText } from "./log/redaction.js";
export { coalescedRead, SCRAPE_HOLD_MS } from "./ops/coalesced-read.js";
export { createMetricsRegistry } from "./ops/metrics-registry.js";
export { type OpsServer, type OpsServerSettings, startOpsServer } from "./ops/ops-server.js";
export { connectionsCheckingInterval } from "./ops/timeout-checks.js";
export { type BackoffOptions, type BackoffPolicy, backoffMs } from "./retry/backoff.js";
export { type TraceFields, traceFields } from "./telemetry/log-trace-fields.js";
export { contextFromHeaders, linkFromHeaders, traceHeaders } from "./telemetry/message-trace-context.js";
export { startTracing, type Tracing, type TracingSettings } from "./telemetry/start-tracing.js";
export { type TracingConfig, tracingConfig } from "./telemetry/tracing-config.js";
