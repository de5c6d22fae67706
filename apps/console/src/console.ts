import { queuesFor } from "@outbox/consumer/operations";
import { runDeps } from "@outbox/relay/operations";
import {
  configuredConnection,
  createDatabase,
  createLogger,
  createS3Client,
  createSnsClient,
  endpointFor,
  type Logger,
  missingSchemaLine,
  packageVersion,
  probedDatabase,
} from "@outbox/shared";
import { ReplayDesk } from "./actions/replay-desk.js";
import { loadAssets } from "./assets/load-assets.js";
import { DeadLetterDesk } from "./reads/dead-letters.js";
import { createConsoleServer } from "./server.js";
import { type ConsoleConfig, operatorsOf, republishes } from "./settings.js";

/** Seconds between a page's live refreshes: SQS's own counts move about once a minute, the outbox's at once. */
export const REFRESH_SECONDS = 5;

export interface RunningConsole {
  readonly url: string;
  /** Stops listening, then closes the SQS clients and the pool. */
  close(): Promise<void>;
}

/**
 * Starts the console on `config`: a small pool on the database (a person's page views, not traffic),
 * another for the republish runs (CONSOLE_REPUBLISH_RUNS connections),
 * the DLQ desk when a DLQ is configured, the assets bundled, the server listening. Resolves with its
 * URL once it listens. A database that lacks migrations: the line naming them (for stderr), nothing started.
 */
export async function startConsole(
  config: ConsoleConfig,
  stopping: AbortSignal,
  log: Logger = createLogger({
    service: "console",
    version: packageVersion(import.meta.url),
    level: config.logLevel,
  }),
): Promise<RunningConsole | string> {
  const settings = {
    ...configuredConnection(config),
    service: "console",
    // Page views only: republish runs have a pool of their own.
    poolMax: 4,
    idleInTransactionTimeoutMs: config.dbStatementTimeoutMs,
  };
  const database = await probedDatabase(createDatabase(settings), settings, log);
  const missing = await missingSchemaLine(database.db, "console");
  if (missing !== undefined) {
    await database.close(config.dbStatementTimeoutMs);
    return missing;
  }
  const queues = config.dlqUrl === "" ? null : queuesFor(config, log);
  const desk = queues === null ? null : new DeadLetterDesk(queues, stopping);
  const aws = {
    region: config.awsRegion,
    connectionTimeoutMs: config.awsConnectionTimeoutMs,
    requestTimeoutMs: config.awsRequestTimeoutMs,
    maxAttempts: config.awsMaxAttempts,
  };
  const sns = republishes(config)
    ? createSnsClient({ ...aws, endpoint: endpointFor(config.awsEndpointUrlSns, config.awsEndpointUrl) })
    : null;
  const s3 =
    sns === null
      ? null
      : createS3Client({ ...aws, endpoint: endpointFor(config.awsEndpointUrlS3, config.awsEndpointUrl) });
  // One connection per run in hand (its lock is its session's), CONSOLE_REPUBLISH_RUNS at most.
  const runsDatabase =
    sns === null
      ? null
      : createDatabase({
          ...configuredConnection(config),
          service: "console-republish",
          poolMax: config.republishRuns,
          idleInTransactionTimeoutMs: config.dbStatementTimeoutMs,
        });
  const replays =
    sns === null || s3 === null || runsDatabase === null
      ? null
      : new ReplayDesk(
          runsDatabase.db,
          runDeps(
            config,
            runsDatabase,
            { sns, s3 },
            { log, stopping, warn: (text) => log.warn({}, `republish: ${text}`) },
          ),
          config.republishRuns,
        );
  const server = createConsoleServer({
    db: database.db,
    desk,
    replays,
    log,
    assets: await loadAssets(),
    credentials: { token: config.token, operators: operatorsOf(config) },
    readOnly: config.readOnly,
    claimCheckSendWithinHours: config.claimCheckSendWithinHours,
    refreshSeconds: REFRESH_SECONDS,
  });
  const port = await server.listen(config.host, config.port);
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}/`;
  log.info(
    {
      url,
      pid: process.pid,
      readOnly: config.readOnly,
      dlq: desk !== null,
      republish: replays !== null,
      authenticated: config.token !== "" || config.users !== "",
      republishRuns: config.republishRuns,
    },
    "console listening",
  );
  return {
    url,
    async close() {
      await server.close();
      // A run in hand ends after its page once `stopping` aborts: its cursor saved, resumable.
      await replays?.runsEnded();
      queues?.close();
      sns?.destroy();
      s3?.destroy();
      await runsDatabase?.close(config.dbStatementTimeoutMs);
      await database.close(config.dbStatementTimeoutMs);
    },
  };
}
