import {
  configuredConnection,
  createDatabase,
  createSnsClient,
  type DatabaseClientConfig,
  type DatabaseHandle,
  endpointFor,
  type Logger,
  packageVersion,
  runDaemon,
  type SettingsInCode,
} from "@outbox/shared";
import { captureEarlyStopSignals } from "@outbox/shared/early-stop";
import { claimBoundMs } from "./claim-bound.js";
import { createRelay } from "./relay.js";
import { publishTimeoutMs, type RelayConfig, relaySettings, relayTimeouts } from "./settings.js";
import { createSnsPublisher } from "./sns/publisher.js";

export interface RunRelayOptions {
  /**
   * Settings fixed in code, by their variables' names (docs/relay.md's table), e.g.
   * `{ RELAY_TOPIC_ARNS: "orders=arn:…" }`: they win over the environment, which gives the rest.
   * Both are parsed and checked as one, exactly as the daemon's environment.
   */
  readonly settings?: SettingsInCode;
}

/**
 * The relay, run until SIGTERM: our image's entry point (`relay run`) and an application's own
 * alike. It owns the process as the daemon does (runDaemon): invalid configuration prints one line
 * per problem and exits 78; the first SIGTERM or SIGINT stops the claims, drains within
 * RELAY_DRAIN_TIMEOUT_MS, logs what it left unsent, and exits 0; a crash exits 1. Never resolves.
 */
export function runRelay(options: RunRelayOptions = {}): Promise<never> {
  // A SIGTERM while the database and the SDK load is a clean stop, not a kill.
  captureEarlyStopSignals();
  return runDaemon({
    service: "relay",
    version: packageVersion(import.meta.url),
    settings: relaySettings,
    settingsInCode: options.settings,
    timeouts: relayTimeouts,
    async start({ config, log, database, metrics }) {
      const sns = createSnsClient({
        region: config.awsRegion,
        endpoint: endpointFor(config.awsEndpointUrlSns, config.awsEndpointUrl),
        connectionTimeoutMs: config.awsConnectionTimeoutMs,
        requestTimeoutMs: config.awsRequestTimeoutMs,
        maxAttempts: config.awsMaxAttempts,
        maxSockets: config.publishConcurrency,
      });
      const listenUrl = listenConnection(config, database, log);
      const relay = createRelay({
        db: database.db,
        publisher: createSnsPublisher(sns),
        listenUrl,
        topicArns: config.topicArns,
        defaultTopicArn: config.defaultTopicArn,
        batchSize: config.batchSize,
        leaseMs: config.leaseMs,
        leaseMarginMs: config.dbStatementTimeoutMs,
        publishConcurrency: config.publishConcurrency,
        pipelineDepth: config.pipelineDepth,
        publishTimeoutMs: publishTimeoutMs(config),
        claimBoundMs: claimBoundMs(config),
        maxAttempts: config.maxAttempts,
        backoff: { baseMs: config.backoffBaseMs, maxMs: config.backoffMaxMs },
        outageBackoffMaxMs: config.outageBackoffMaxMs,
        pollIntervalMs: config.pollIntervalMs,
        claimCheckSendWithinHours: config.claimCheckSendWithinHours,
        retention:
          config.retentionMs > 0
            ? { maxAgeMs: config.retentionMs, intervalMs: config.retentionIntervalMs }
            : null,
        log,
        metrics,
      });
      relay.start();
      // runDaemon's `stopping` is not wired in: it calls drain in the same turn as it aborts it, and
      // the drain stops the claims first.
      return {
        failure: relay.failure,
        inFlight: () => relay.inFlight(),
        stalled: () => relay.stalled(),
        async drain(drainDeadline) {
          try {
            return await relay.drain(drainDeadline);
          } finally {
            sns.destroy();
          }
        },
      };
    },
  });
}

/**
 * Where the LISTEN wake-up (and its sleep lock) connects: a session of its own. Directly, the
 * pool's connection settings, TLS included (DB_SSL_MODE), not the bare URL. Behind a transaction
 * pooler LISTEN would land on a pooled server connection (its notifications dropped, its lock left
 * held there): DATABASE_SESSION_URL with the same TLS settings, or polling only, said in one line.
 */
function listenConnection(
  config: RelayConfig,
  database: DatabaseHandle,
  log: Logger,
): DatabaseClientConfig | null {
  if (!database.transactionPooler) return database.clientConfig;
  if (config.databaseSessionUrl === "") {
    log.info(
      { pollIntervalMs: config.pollIntervalMs },
      "no insert notifications behind a transaction pooler (LISTEN needs a session; set DATABASE_SESSION_URL): polling",
    );
    return null;
  }
  // Only its client settings are used (a ConfigError for its TLS is bad config): the pool never connects.
  const session = createDatabase({
    ...configuredConnection(config),
    url: config.databaseSessionUrl,
    service: "relay-listen",
    idleInTransactionTimeoutMs: config.dbIdleInTransactionTimeoutMs,
  });
  void session.close(0);
  return session.clientConfig;
}
