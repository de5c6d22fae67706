import { createSnsClient, endpointFor, packageVersion, runDaemon } from "@outbox/shared";
import { createRelay } from "./relay.js";
import { publishTimeout, relayTimeouts } from "./relay-timeouts.js";
import { relaySettings } from "./settings.js";
import { createSnsPublisher } from "./sns-publisher.js";

/** The relay as a daemon: configuration from the environment, stop and exit codes from runDaemon. */
export function runRelayDaemon(): Promise<never> {
  return runDaemon({
    service: "relay",
    version: packageVersion(import.meta.url),
    settings: relaySettings,
    timeouts: relayTimeouts,
    async start({ config, log, database, metrics, stopping }) {
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
        publishTimeoutMs: publishTimeout(config).ms,
        maxAttempts: config.maxAttempts,
        backoff: { baseMs: config.backoffBaseMs, maxMs: config.backoffMaxMs },
        outageBackoffMaxMs: config.outageBackoffMaxMs,
        pollIntervalMs: config.pollIntervalMs,
        retention:
          config.retentionMs > 0
            ? { maxAgeMs: config.retentionMs, intervalMs: config.retentionIntervalMs }
            : null,
        log,
        metrics,
      });
      // runDaemon aborts `stopping` first (stop claiming), then calls drain with the deadline.
      stopping.addEventListener("abort", () => relay.stop(), { once: true });
      return {
        failure: relay.failure,
        inFlight: () => relay.inFlight(),
        async drain(drainDeadline) {
          try {
            // runDaemon starts the deadline's timer just before this call: the budget is the whole drain.
            return await relay.drain(drainDeadline.signal, config.drainTimeoutMs);
          } finally {
            sns.destroy();
          }
        },
      };
    },
  });
}
