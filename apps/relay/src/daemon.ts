import { createSnsClient, endpointFor, packageVersion, runDaemon } from "@outbox/shared";
import { claimBoundMs } from "./claim-bound.js";
import { createRelay } from "./relay.js";
import { publishTimeoutMs, relaySettings, relayTimeouts } from "./settings.js";
import { createSnsPublisher } from "./sns-publisher.js";

/** The relay as a daemon: configuration from the environment, stop and exit codes from runDaemon. */
export function runRelayDaemon(): Promise<never> {
  return runDaemon({
    service: "relay",
    version: packageVersion(import.meta.url),
    settings: relaySettings,
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
