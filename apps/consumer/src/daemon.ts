import {
  ConfigError,
  createLongPollSqsClient,
  createS3Client,
  createSqsClient,
  endpointFor,
  packageVersion,
  runDaemon,
} from "@outbox/shared";
import { sql } from "kysely";
import { createConsumer } from "./consumer.js";
import { consumerNameOf, formerDefaultProblems } from "./consumer-name.js";
import { tuningOf } from "./consumer-options.js";
import { loadHandlers } from "./load-handlers.js";
import { receiveBoundMs } from "./receive-bound.js";
import { startInboxRetention } from "./retention.js";
import { CONSUMER_PLAN_CACHE_MODE, consumerSettings, consumerStartChecks } from "./settings.js";

/** The consumer as a daemon: configuration from the environment, stop and exit codes from runDaemon. */
export function runConsumerDaemon(): Promise<never> {
  return runDaemon({
    service: "consumer",
    version: packageVersion(import.meta.url),
    settings: consumerSettings,
    timeouts: consumerStartChecks,
    planCacheMode: CONSUMER_PLAN_CACHE_MODE,
    async start({ config, log, database, metrics, stopping }) {
      const handlers = await loadHandlers(config.handlersModule);
      // Fail at start, not on the first message, when migrations have not run.
      await sql`SELECT 1 FROM inbox LIMIT 0`.execute(database.db);
      const name = consumerNameOf(config.name, config.queueUrl);
      const nameProblems = await formerDefaultProblems(database.db, config.name, name);
      if (nameProblems.length > 0) throw new ConfigError(nameProblems);
      const awsSettings = {
        region: config.awsRegion,
        endpoint: endpointFor(config.awsEndpointUrlSqs, config.awsEndpointUrl),
        connectionTimeoutMs: config.awsConnectionTimeoutMs,
        requestTimeoutMs: config.awsRequestTimeoutMs,
        maxAttempts: config.awsMaxAttempts,
      };
      // Deletes, heartbeats, releases and the DLQ.
      const sqs = createSqsClient({ ...awsSettings, maxSockets: 16 });
      // The long polls, one socket each, on a client of their own (see createLongPollSqsClient).
      const receiveSqs = createLongPollSqsClient(
        { ...awsSettings, maxSockets: config.pollers },
        config.waitTimeSeconds,
      );
      // The claim check's reads: a client of their own, so its endpoint can be S3's.
      const s3 =
        config.claimCheckBucket === ""
          ? undefined
          : createS3Client({
              ...awsSettings,
              endpoint: endpointFor(config.awsEndpointUrlS3, config.awsEndpointUrl),
              maxSockets: config.concurrency,
            });
      const consumer = createConsumer({
        handlers,
        pool: database.pool,
        sqs,
        receiveSqs,
        queueUrl: config.queueUrl,
        dlqUrl: config.dlqUrl,
        delivery: config.delivery,
        topicArns: config.topicArns,
        name,
        claimCheck: s3 === undefined ? undefined : { s3, bucket: config.claimCheckBucket },
        log,
        metrics,
        ...tuningOf(config),
        receiveBoundMs: receiveBoundMs(config),
      });
      const retention = startInboxRetention({
        db: database.db,
        consumer: name,
        retentionHours: config.inboxRetentionHours,
        intervalMs: config.inboxCleanupIntervalMs,
        log,
      });
      stopping.addEventListener("abort", () => consumer.stop(), { once: true });
      consumer.start();
      log.info({ queueUrl: config.queueUrl, handlers: handlers.types, consumer: name }, "consuming");
      return {
        failure: consumer.failure,
        inFlight: consumer.inFlight,
        stalled: consumer.stalled,
        unready() {
          const paused = consumer.pausedBy();
          return paused.length === 0 ? undefined : `intake paused: ${paused.join(", ")}`;
        },
        async drain(drainDeadline) {
          // runDaemon's deadline (CONSUMER_DRAIN_TIMEOUT_MS from the stop) is the consumer's whole drain.
          const [summary] = await Promise.all([consumer.drain(drainDeadline), retention.stop()]);
          sqs.destroy();
          receiveSqs.destroy();
          s3?.destroy();
          return summary;
        },
      };
    },
  });
}
