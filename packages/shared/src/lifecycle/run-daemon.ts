import { performance } from "node:perf_hooks";
import { Deadline } from "@outbox/client";
import type { Registry } from "prom-client";
import type { commonSettings } from "../config/common-settings.js";
import { ConfigError, configErrorText } from "../config/config-error.js";
import { formerNamesIn } from "../config/load-config.js";
import type { ConfigOf, SettingsSpec } from "../config/setting.js";
import type { SettingsInCode } from "../config/settings-in-code.js";
import { describeTimeouts } from "../config/timeout-budget.js";
import { configuredConnection } from "../db/configured-connection.js";
import {
  createDatabase,
  type DatabaseHandle,
  type DatabaseSettings,
  type PlanCacheMode,
} from "../db/create-database.js";
import { plainTextConnection } from "../db/database-tls.js";
import { missingSchemaLine, type ServiceSchema } from "../db/require-schema.js";
import { rotatingPassword } from "../db/rotating-password.js";
import { probedDatabase } from "../db/transaction-pooler.js";
import { createLogger, type Logger } from "../log/logger.js";
import { createMetricsRegistry } from "../ops/metrics-registry.js";
import { startOpsServer } from "../ops/ops-server.js";
import { startTracing } from "../telemetry/start-tracing.js";
import { settlesBefore } from "./bounded-waits.js";
import { EXIT_CONFIG, EXIT_CRASH, EXIT_OK } from "./exit-codes.js";
import { type DaemonTimeouts, resolveDaemonConfig } from "./resolve-daemon-config.js";
import { listenForStopRequests } from "./stop-requests.js";

/** What a worker reports once drained; the fields go on the daemon's final log line as they are. */
export interface DrainSummary {
  readonly clean: boolean;
  readonly [field: string]: string | number | boolean;
}

export interface Worker<S extends DrainSummary = DrainSummary> {
  /** Rejects if the worker fails on its own (the daemon exits 1); never resolves. */
  readonly failure: Promise<never>;
  /**
   * Called once, after `stopping` aborted and intake stopped: finish the work in flight, and give up
   * what is left when `drainDeadline` aborts. The stop itself never aborts `drainDeadline`; every
   * wait of the drain, down to the last outbound call, is bounded by it (or by a `min` of it).
   */
  drain(drainDeadline: Deadline): Promise<S>;
  /** Counts of what a forced exit (Ctrl-C twice) would abandon. */
  inFlight(): Record<string, number>;
  /**
   * Why the worker, though running, does no work now (what every piece of work needs is down), or
   * undefined: `/readyz` answers 503 with it meanwhile.
   */
  readonly unready?: () => string | undefined;
  /**
   * Why the worker's loop is stuck (it has not turned for longer than its bound, see LoopWatch), or
   * undefined: `/livez` answers 503 with it meanwhile, for the platform to restart the process.
   */
  readonly stalled?: () => string | undefined;
}

export interface DaemonContext<C> {
  readonly config: C;
  readonly log: Logger;
  readonly database: DatabaseHandle;
  readonly metrics: Registry;
  /** Aborts when a stop is requested: take no new work. */
  readonly stopping: AbortSignal;
}

type CommonSettings = typeof commonSettings;

export interface DaemonDefinition<S extends SettingsSpec & CommonSettings, W extends DrainSummary> {
  readonly service: string;
  readonly version: string;
  readonly settings: S;
  /** The drain timeout and the daemon's own budget rules; the common ones are added here. */
  readonly timeouts: DaemonTimeouts<ConfigOf<S>>;
  start(context: DaemonContext<ConfigOf<S>>): Promise<Worker<W>>;
  /** How the pool's prepared statements are planned; default `force_custom_plan` ({@link PlanCacheMode}). */
  readonly planCacheMode?: PlanCacheMode;
  /**
   * The longest `statement_timeout` the daemon's transactions set for themselves, when that can
   * exceed DB_STATEMENT_TIMEOUT_MS (see `DatabaseSettings.longestStatementMs`).
   */
  readonly longestStatementMs?: (config: ConfigOf<S>) => number;
  /** Migration sets the daemon needs beyond the outbox's, checked before it starts. */
  readonly schema?: ServiceSchema;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Settings an application fixed in code (runRelay's and runConsumer's `settings`): they win over
   * `env` and are parsed and checked with it, as one environment (see resolveDaemonConfig).
   */
  readonly settingsInCode?: SettingsInCode;
}

/** What `task` returns; if it throws a ConfigError, every problem on stderr and exit 78. */
function orExitOnConfigError<T>(service: string, task: () => T): T {
  try {
    return task();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // Every problem, one line each and no stack trace: this is an operator's typo, not a bug.
    process.stderr.write(configErrorText(service, error));
    process.exit(EXIT_CONFIG);
  }
}

/**
 * Runs a worker as a daemon and owns its whole life. The stop order is fixed here, once:
 * readiness 503 → the worker's `drain` (which stops taking work first; bounded by the drain
 * deadline, a signal of its own that the stop request does not abort) → close the ops server (after
 * the drain, so the stop stays observable on /metrics) → close the pool and flush the spans (side by
 * side, each bounded by the shutdown overhead) → exit. The whole stop ends within drain timeout +
 * shutdown overhead: a drain still running then is left behind, and the closes get what is left.
 * Exit codes (exit-codes.ts): EXIT_OK for any signal-initiated stop, EXIT_CRASH for a crash,
 * EXIT_CONFIG for bad config (a ConfigError from the worker's `start` too: a setting it judges against
 * its database) or a database that lacks migrations; a second stop request exits EXIT_FORCED at once (stop-requests.ts).
 */
export async function runDaemon<S extends SettingsSpec & CommonSettings, W extends DrainSummary>(
  definition: DaemonDefinition<S, W>,
): Promise<never> {
  const { config, drain, rules, env } = orExitOnConfigError(definition.service, () =>
    resolveDaemonConfig(
      definition.settings,
      definition.timeouts,
      definition.env ?? process.env,
      definition.settingsInCode,
    ),
  );
  // S extends the common settings, so these keys are present; TypeScript cannot see through ConfigOf<S>.
  const common = config as unknown as ConfigOf<CommonSettings>;
  // No connection yet (the pool connects on demand), but TLS settings that cannot work (an unreadable
  // CA bundle, an sslmode pg cannot honour) are bad config too: exit 78 before anything is logged.
  const log = createLogger({
    service: definition.service,
    version: definition.version,
    level: common.logLevel,
  });
  const databaseSettings: DatabaseSettings = {
    ...configuredConnection(common),
    service: definition.service,
    poolMax: common.dbPoolMax,
    poolMaxLifetimeSeconds: common.dbPoolMaxLifetimeSeconds,
    longestStatementMs: definition.longestStatementMs?.(config),
    idleInTransactionTimeoutMs: common.dbIdleInTransactionTimeoutMs,
    planCacheMode: definition.planCacheMode,
    ...(common.databaseSecretArn === ""
      ? {}
      : {
          password: rotatingPassword({
            secretArn: common.databaseSecretArn,
            databaseUrl: common.databaseUrl,
            connectTimeoutMs: common.dbConnectTimeoutMs,
            log,
          }),
        }),
  };
  const database = await probedDatabase(
    orExitOnConfigError(definition.service, () => createDatabase(databaseSettings)),
    databaseSettings,
    log,
  );
  const plainText = plainTextConnection(common.databaseUrl, {
    mode: common.dbSslMode,
    caFile: common.dbSslCaFile,
  });
  if (plainText !== undefined) {
    log.warn(
      { host: plainText.host, setting: plainText.setting },
      "plain-text database connection to a host that is not loopback",
    );
  }
  for (const { former, current } of formerNamesIn(definition.settings, env)) {
    log.warn(
      { variable: former, renamedTo: current },
      "deprecated variable name: rename it; read for one more release",
    );
  }
  // A database that cannot answer yet is no reason to refuse: the worker's own loops retry it.
  const missingSchema = await missingSchemaLine(database.db, definition.service, definition.schema).catch(
    (error: unknown) => {
      log.warn({ err: error }, "schema not checked: the database did not answer");
      return undefined;
    },
  );
  if (missingSchema !== undefined) {
    process.stderr.write(missingSchema);
    await database.close(common.shutdownOverheadMs);
    process.exit(EXIT_CONFIG);
  }
  let worker: Worker<W> | undefined;
  const stop = listenForStopRequests(log, () =>
    log.error({ abandoned: worker?.inFlight() ?? {} }, "second SIGINT: exiting without draining"),
  );
  const exit = (code: number): never => {
    log.info({ exitCode: code }, "exit");
    process.exit(code);
  };
  process.on("uncaughtException", (error) => {
    log.fatal({ err: error }, "uncaught exception");
    process.exit(EXIT_CRASH);
  });
  process.on("unhandledRejection", (reason) => {
    log.fatal({ err: reason }, "unhandled rejection");
    process.exit(EXIT_CRASH);
  });

  log.info({ ...describeTimeouts(rules) }, "timeout budget");
  // Only if the OTEL_* variables ask for it; otherwise the spans of enqueue, relay and consumer are no-ops.
  const tracing = await startTracing({ service: definition.service, version: definition.version, log });
  /** The pool closes and the buffered spans are exported side by side: neither waits for the other. */
  const closePoolAndTraces = async (withinMs = common.shutdownOverheadMs): Promise<boolean> => {
    const [poolClosed] = await Promise.all([database.close(withinMs), tracing.shutdown(withinMs)]);
    return poolClosed;
  };
  const metrics = createMetricsRegistry(definition.service);
  const ops = await startOpsServer({ host: common.opsHost, port: common.opsPort, metrics, log });

  try {
    worker = await definition.start({ config, log, database, metrics, stopping: stop.stopping });
  } catch (error) {
    // A setting only the worker can judge (against what its database holds, say): bad config all the same.
    if (error instanceof ConfigError) process.stderr.write(configErrorText(definition.service, error));
    else log.fatal({ err: error }, "start failed");
    await ops.close();
    await closePoolAndTraces();
    return exit(error instanceof ConfigError ? EXIT_CONFIG : EXIT_CRASH);
  }
  if (worker.unready !== undefined) ops.readyUnless(worker.unready);
  if (worker.stalled !== undefined) ops.liveUnless(worker.stalled);
  ops.setReady(true);
  log.info({ opsPort: ops.port }, "started");

  const outcome = await Promise.race([
    stop.requested.then((signal) => ({ kind: "stop" as const, signal })),
    worker.failure.catch((error: unknown) => ({ kind: "crash" as const, error })),
  ]);
  if (outcome.kind === "crash") {
    log.fatal({ err: outcome.error }, "worker failed");
    ops.setReady(false);
    await ops.close();
    await closePoolAndTraces();
    return exit(EXIT_CRASH);
  }

  ops.setReady(false);
  const drainStarted = performance.now();
  log.info({ drainTimeoutMs: drain.ms, signal: outcome.signal }, "draining");
  const drainDeadline = Deadline.after(drain.ms);
  // The whole stop fits drain + overhead, which the budget keeps below STOP_TIMEOUT_MS: a drain
  // still running when the overhead is spent too (a worker waiting on a server that answers
  // nothing) is left behind, and the closes get whatever the overhead has left.
  const stopBudgetMs = drain.ms + common.shutdownOverheadMs;
  const stopDeadline = Deadline.after(stopBudgetMs);
  let summary: W | undefined;
  const drained = worker.drain(drainDeadline).then((result) => {
    summary = result;
  });
  const drainEnded = await settlesBefore(drained, stopDeadline);
  drainDeadline.dispose();
  stopDeadline.dispose();
  const drainMs = Math.round(performance.now() - drainStarted);
  if (drainEnded) log.info({ ...summary, drainMs }, "drained");
  else {
    drained.catch(() => {});
    log.error(
      { drainMs, abandoned: worker.inFlight() },
      "drain did not end within the stop budget; leaving it",
    );
  }

  await ops.close();
  log.info("ops server closed");
  const closeWithinMs = Math.round(
    Math.min(common.shutdownOverheadMs, Math.max(0, stopBudgetMs - (performance.now() - drainStarted))),
  );
  const poolClosed = await closePoolAndTraces(closeWithinMs);
  if (poolClosed) log.info("database pool closed");
  else log.warn({ waitedMs: closeWithinMs }, "database pool did not close in time");
  stop.dispose();
  return exit(EXIT_OK);
}
