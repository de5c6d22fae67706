import { createSnsClient, endpointFor, packageVersion, runDaemon } from "@outbox/shared";
import { runRequeueDead } from "./cli/requeue-dead.js";
import { runStatus } from "./cli/status.js";
import { createRelay } from "./relay.js";
import { publishTimeout, relaySettings, relayTimeouts } from "./settings.js";
import { createSnsPublisher } from "./sns-publisher.js";

const USAGE = `usage: relay [run]                  publish the outbox to SNS until SIGTERM
       relay status [--json]         unsent and dead rows, oldest unsent age, per topic
       relay requeue-dead [--id ID]  give dead rows (or one) a fresh set of attempts
`;

const [command = "run", ...args] = process.argv.slice(2);
switch (command) {
  case "run":
    await runDaemon({
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
          listenUrl: config.databaseUrl,
          topicArns: config.topicArns,
          defaultTopicArn: config.defaultTopicArn,
          batchSize: config.batchSize,
          leaseMs: config.leaseMs,
          leaseMarginMs: config.dbStatementTimeoutMs,
          publishConcurrency: config.publishConcurrency,
          publishTimeoutMs: publishTimeout(config).ms,
          maxAttempts: config.maxAttempts,
          backoff: { baseMs: config.backoffBaseMs, maxMs: config.backoffMaxMs },
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
              return await relay.drain(drainDeadline);
            } finally {
              sns.destroy();
            }
          },
        };
      },
    });
    break;
  case "status":
    process.exitCode = await runStatus(args);
    break;
  case "requeue-dead":
    process.exitCode = await runRequeueDead(args);
    break;
  default:
    process.stderr.write(USAGE);
    process.exitCode = 64;
}
