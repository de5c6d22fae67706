import { createSnsClient, endpointFor, packageVersion, runDaemon, type SettingsInCode } from "@outbox/shared";
import { captureEarlyStopSignals } from "@outbox/shared/early-stop";
import { claimBoundMs } from "./claim-bound.js";
import { createRelay } from "./relay.js";
import { publishTimeoutMs, relaySettings, relayTimeouts } from "./settings.js";
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
      const relay = createRelay({
        db: database.db,
        publisher: createSnsPublisher(sns),
        // The pool's connection settings, TLS included (DB_SSL_MODE), not the bare URL.
        listenUrl: database.clientConfig,
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
