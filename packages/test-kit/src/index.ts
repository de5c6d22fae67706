// For test files under vitest: the run's stack (test/global-setup.ts provides it) and everything
// in ./process.ts.
export { type AwsClientOptions, awsClients, faultClient, stack } from "./aws.js";
export { type BuiltEntryProcess, expectCleanStops, startBuiltEntry } from "./built-entry.js";
export { type CapturedLog, capturingLogger } from "./capturing-logger.js";
export { createMigratedTestDatabase, createTestDatabase } from "./database.js";
export { metricValue } from "./metric-value.js";
export { uniqueName } from "./names.js";
export { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "./otlp-receiver.js";
export * from "./process.js";
export { type DrainedMessage, drainQueue, queueDepth, type Received, receiveAll } from "./queues.js";
export {
  configRefusal,
  expectAnswer,
  expectUsageError,
  type Finished,
  runEntryPoint,
  versionOf,
} from "./run-entry-point.js";
export { type SilentServer, startSilentServer } from "./silent-server.js";
export { startTlsPostgres, type TlsPostgres } from "./tls-postgres.js";
export { oncePerRun, runFolder, withWorkspaceBuild } from "./workspace-build.js";
