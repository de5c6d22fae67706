export { s3Client, snsClient, sqsClient } from "./aws-clients.js";
export { awsEnvironment } from "./aws-environment.js";
export { type BootstrapOptions, type BootstrappedResources, bootstrapResources } from "./bootstrap.js";
export { killWithThisProcess } from "./child-watchdog.js";
export {
  type EquipmentFault,
  type EquipmentStub,
  type ReceivedLink,
  startEquipmentStub,
} from "./equipment/stub.js";
export { cleanUpAtExit } from "./exit-cleanup.js";
export { type LocalAws, type LocalAwsOptions, startLocalAws } from "./local-aws.js";
export type {
  AwsEndpoints,
  Backend,
  LocalStack,
  StackInfo,
  StackPostgres,
  StartStackOptions,
} from "./local-stack.js";
export { type MotoServerOptions, type RunningMotoServer, startMotoServer } from "./moto/moto-server.js";
export { startTcpFaultProxy, type TcpCut, type TcpFaultProxy } from "./net/tcp-fault-proxy.js";
export {
  type PgBouncerOptions,
  type PoolMode,
  pgBouncerCommand,
  type RunningPgBouncer,
  startPgBouncer,
} from "./pgbouncer/pgbouncer.js";
export { DEFAULT_POSTGRES_MAJOR, postgresMajor } from "./postgres/binaries.js";
export { createDatabaseOn } from "./postgres/create-database-on.js";
export {
  type EmbeddedPostgresOptions,
  type EmbeddedPostgresTls,
  type PostgresRestartOptions,
  type PostgresServerControl,
  type PostgresStopMode,
  type RunningPostgres,
  startEmbeddedPostgres,
} from "./postgres/embedded.js";
export { CLAIM_CHECK_BUCKET, createClaimCheckBucket } from "./s3/claim-check-bucket.js";
export { FaultClient } from "./sns/faults/client.js";
export type { FaultConfig, FaultRules, FaultScope, OkBody } from "./sns/faults/config.js";
export { type SnsEmulator, type SnsEmulatorOptions, startSnsEmulator } from "./sns/server.js";
// The emulator's own unsigned SQS client: the emulator benchmark's cheapest client (CLIENT=raw).
export { SqsJsonClient } from "./sns/sqs-json.js";
export { type EmbeddedSqsOptions, type RunningSqs, startEmbeddedSqs } from "./sqs/embedded.js";
export { faultClientFor, stackInfo, startStack, statsClientFor } from "./stack.js";
export { StatsClient } from "./stats/client.js";
export type { EmulatorStats, TopicStats } from "./stats/stats.js";
