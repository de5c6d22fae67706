import { setting } from "./setting.js";

/** Where the image puts Amazon RDS's global CA bundle (Dockerfile, runtime stage). */
export const RDS_CA_BUNDLE_PATH = "/etc/ssl/certs/rds-global-bundle.pem";

/**
 * Settings every daemon shares. A daemon spreads these into its own spec so that one table per daemon
 * documents everything it reads.
 */
export const commonSettings = {
  databaseUrl: setting.databaseUrl({
    env: "DATABASE_URL",
    description:
      "Postgres connection: a URL, or an RDS-managed secret's JSON (username, password, host, port, dbname); in ECS, injected from Secrets Manager.",
    secret: true,
  }),
  databaseSecretArn: setting.string({
    env: "DATABASE_SECRET_ARN",
    default: "",
    defaultLabel: "*(none)*",
    description:
      "Secrets Manager secret (ARN) holding DATABASE_URL's credentials: a new connection authenticates with the password it holds (read again in the background every minute, and before the next connection after a refused one), so a rotated password needs no restart. Needs secretsmanager:GetSecretValue; endpoint override AWS_ENDPOINT_URL_SECRETS_MANAGER.",
  }),
  dbPoolMax: setting.integer({
    env: "DB_POOL_MAX",
    min: 1,
    max: 200,
    unit: "connections",
    default: 25,
    description: "Upper bound of the pg pool; keep replicas × this below the server's max_connections.",
  }),
  // At least a second: pg reads 0 as "never replaced", and a connection that lives forever keeps
  // talking to the old primary after a failover (or to the old address after a DNS change).
  dbPoolMaxLifetimeSeconds: setting.integer({
    env: "DB_POOL_MAX_LIFETIME_SECONDS",
    min: 1,
    max: 86_400,
    unit: "s",
    default: 300,
    description:
      "A pooled connection is replaced once it is this old (when idle, or as soon as its query ends), so a failover or a DNS change is picked up without a restart.",
  }),
  dbStatementTimeoutMs: setting.milliseconds({
    env: "DB_STATEMENT_TIMEOUT_MS",
    min: 100,
    max: 600_000,
    default: 5_000,
    description:
      "Server-side statement_timeout of every pooled connection; must stay below the drain timeout.",
  }),
  dbIdleInTransactionTimeoutMs: setting.milliseconds({
    env: "DB_IDLE_IN_TRANSACTION_TIMEOUT_MS",
    min: 100,
    max: 600_000,
    default: 10_000,
    description:
      "Server-side idle_in_transaction_session_timeout: a stuck client cannot hold row locks longer.",
  }),
  dbConnectTimeoutMs: setting.milliseconds({
    env: "DB_CONNECT_TIMEOUT_MS",
    min: 100,
    max: 60_000,
    default: 5_000,
    description:
      "Bounds opening a Postgres connection (TCP, TLS, authentication) and waiting for a free one in the pool. Also the margin over the statement timeout after which an unanswered query is given up client-side and its connection closed (a hung server cannot enforce its own statement_timeout).",
  }),
  dbPreparedStatements: setting.boolean({
    env: "DB_PREPARED_STATEMENTS",
    default: true,
    description:
      "Prepare each parameterised statement once per connection (named after its text's hash), so Postgres does not parse it again. Behind a transaction pooler (detected at start-up, see docs/deployment.md) nothing is prepared, whatever this says.",
  }),
  dbSslMode: setting.oneOf({
    env: "DB_SSL_MODE",
    values: ["auto", "disable", "require", "verify-full"],
    default: "auto",
    description:
      "TLS to Postgres. verify-full: the server's certificate must chain to DB_SSL_CA_FILE and name the URL's host; require: encrypted, but the server is not verified; disable: plain text; auto: the URL's sslmode (disable, require, verify-full; no-verify = require), else verify-full, or disable for a loopback host or a socket. Plain text to any other host is logged as a warning at start-up.",
  }),
  dbSslCaFile: setting.string({
    env: "DB_SSL_CA_FILE",
    default: RDS_CA_BUNDLE_PATH,
    description:
      "PEM bundle of the CAs verify-full trusts, read at start-up (only in verify-full). The image ships Amazon RDS's global bundle at the default path.",
  }),
  logLevel: setting.oneOf({
    env: "LOG_LEVEL",
    values: ["fatal", "error", "warn", "info", "debug", "trace", "silent"],
    default: "info",
    description: "pino log level.",
  }),
  opsPort: setting.integer({
    env: "OPS_PORT",
    min: 0,
    max: 65_535,
    default: 9_090,
    description: "Port of the ops server (/livez, /readyz, /metrics); 0 picks a free port.",
  }),
  opsHost: setting.ipAddress({
    env: "OPS_HOST",
    default: "0.0.0.0",
    description:
      "Address the ops server binds to. 0.0.0.0 because ECS target-group and container health checks reach the task on its own network address, not on loopback; 127.0.0.1 keeps /metrics off the network where a sidecar scrapes it locally.",
  }),
  stopTimeoutMs: setting.milliseconds({
    env: "STOP_TIMEOUT_MS",
    min: 1_000,
    max: 120_000,
    default: 30_000,
    description: "The platform's SIGTERM→SIGKILL grace (ECS stopTimeout; 30 s by default, 120 s at most).",
  }),
  shutdownOverheadMs: setting.milliseconds({
    env: "SHUTDOWN_OVERHEAD_MS",
    min: 0,
    max: 60_000,
    default: 5_000,
    description:
      "Time reserved after the drain for closing the ops server and the pool, exporting trace spans and flushing logs.",
  }),
};

/** What a daemon that talks to SNS or SQS adds to the common settings (the relay, the consumer). */
export const awsSettings = {
  awsRegion: setting.string({
    env: "AWS_REGION",
    default: "us-east-1",
    description: "AWS region of SNS and SQS.",
  }),
  awsEndpointUrl: setting.string({
    env: "AWS_ENDPOINT_URL",
    default: "",
    defaultLabel: "*(AWS)*",
    description: "Endpoint override for every AWS service (LocalStack, the local stack).",
  }),
  awsEndpointUrlSns: setting.string({
    env: "AWS_ENDPOINT_URL_SNS",
    default: "",
    defaultLabel: "*(AWS_ENDPOINT_URL)*",
    description: "Endpoint override for SNS only; wins over AWS_ENDPOINT_URL.",
  }),
  awsEndpointUrlSqs: setting.string({
    env: "AWS_ENDPOINT_URL_SQS",
    default: "",
    defaultLabel: "*(AWS_ENDPOINT_URL)*",
    description: "Endpoint override for SQS only; wins over AWS_ENDPOINT_URL.",
  }),
  awsConnectionTimeoutMs: setting.milliseconds({
    env: "AWS_CONNECTION_TIMEOUT_MS",
    min: 100,
    max: 60_000,
    default: 3_000,
    description: "TCP connect timeout of the SNS/SQS HTTP client.",
  }),
  awsRequestTimeoutMs: setting.milliseconds({
    env: "AWS_REQUEST_TIMEOUT_MS",
    min: 100,
    max: 120_000,
    default: 5_000,
    description: "Socket inactivity timeout per SNS/SQS request (raised as an error, not a warning).",
  }),
  awsMaxAttempts: setting.integer({
    env: "AWS_MAX_ATTEMPTS",
    min: 1,
    max: 10,
    default: 3,
    description: "Attempts per SNS/SQS call, the first included (the SDK's standard retry strategy).",
  }),
};

/**
 * S3's own endpoint, for whatever reads the claim check's objects: the consumer (its fetches, and
 * `consumer redrive`) and `relay republish` (both look for an object before sending its pointer again).
 */
export const s3EndpointSettings = {
  awsEndpointUrlS3: setting.string({
    env: "AWS_ENDPOINT_URL_S3",
    default: "",
    defaultLabel: "*(AWS_ENDPOINT_URL)*",
    description:
      "Endpoint override for S3 only (the claim check); wins over AWS_ENDPOINT_URL, and is addressed path-style.",
  }),
};

/**
 * What a one-shot command that opens the database reads (`pnpm migrate`, `relay status`…): the URL,
 * its TLS settings and the statement timeout, so that it runs without a daemon's whole environment.
 */
export const databaseSettings = {
  databaseUrl: commonSettings.databaseUrl,
  dbStatementTimeoutMs: commonSettings.dbStatementTimeoutMs,
  dbConnectTimeoutMs: commonSettings.dbConnectTimeoutMs,
  dbPreparedStatements: commonSettings.dbPreparedStatements,
  dbSslMode: commonSettings.dbSslMode,
  dbSslCaFile: commonSettings.dbSslCaFile,
};
