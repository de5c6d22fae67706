import type { HandlerSet } from "@outbox/client";
import {
  ConfigError,
  createLongPollSqsClient,
  createS3Client,
  createSqsClient,
  endpointFor,
  packageVersion,
  runDaemon,
  type SettingsInCode,
} from "@outbox/shared";
import { captureEarlyStopSignals } from "@outbox/shared/early-stop";
import { sql } from "kysely";
import { createConsumer } from "./consumer.js";
import { consumerNameOf, formerDefaultProblems } from "./consumer-name.js";
import { tuningOf } from "./consumer-options.js";
import { startInboxRetention } from "./inbox/retention.js";
import { isHandlerSet, loadHandlers } from "./load-handlers.js";
import { receiveBoundMs } from "./loop/receive-bound.js";
import { CONSUMER_PLAN_CACHE_MODE, consumerSettings, consumerStartChecks } from "./settings.js";

export interface RunConsumerOptions<DB> {
  /**
   * The handler set, imported by the application's own entry point. Without it the consumer runs
   * the default export of CONSUMER_HANDLERS_MODULE, as our image does; with it, that variable must
   * be unset, so that there is no doubt which handlers run.
   */
  readonly handlers?: HandlerSet<DB>;
  /**
   * Settings fixed in code, by their variables' names (docs/consumer.md's table), e.g.
   * `{ CONSUMER_DELIVERY: "raw", CONSUMER_CONCURRENCY: 10 }`: they win over the environment, which
   * gives the rest. Both are parsed and checked as one, exactly as the daemon's environment.
   */
  readonly settings?: SettingsInCode;
}

/**
 * The consumer, run until SIGTERM: our image's entry point (`consumer run`, handlers from
 * CONSUMER_HANDLERS_MODULE) and an application's own (handlers given) alike. It owns the process
 * as the daemon does (runDaemon): invalid configuration prints one line per problem and exits 78;
 * the first SIGTERM or SIGINT stops intake, drains within CONSUMER_DRAIN_TIMEOUT_MS, logs what it
 * abandoned, and exits 0; a crash exits 1. Never resolves.
 */
export function runConsumer<DB>(options: RunConsumerOptions<DB> = {}): Promise<never> {
  // A bug of the caller's (a module namespace for its default export, say), not configuration.
  if (options.handlers !== undefined && !isHandlerSet(options.handlers)) {
    throw new TypeError("runConsumer: `handlers` must be a handler set made with defineHandlers()");
  }
  // A SIGTERM while the database and the handlers load is a clean stop, not a kill.
  captureEarlyStopSignals();
  const handlersInCode = options.handlers;
  return runDaemon({
    service: "consumer",
    version: packageVersion(import.meta.url),
    settings: consumerSettings,
    settingsInCode: options.settings,
    timeouts: (config) => consumerStartChecks(config, handlersInCode !== undefined),
    planCacheMode: CONSUMER_PLAN_CACHE_MODE,
    async start({ config, log, database, metrics, stopping }) {
      const handlers = handlersInCode ?? (await loadHandlers(config.handlersModule));
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
