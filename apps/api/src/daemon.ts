import { type DaemonContext, packageVersion, runDaemon } from "@outbox/shared";
import { photoDatabase } from "./db/connections.js";
import { apiSchema } from "./db/migrate.js";
import { createEquipmentClient } from "./equipment-client.js";
import { type ApiMetrics, createApiMetrics } from "./metrics.js";
import { type PostPhoto, type PostPhotoDependencies, postPhoto } from "./post-photo.js";
import { reconcileOptions } from "./reconcile-links.js";
import { startReconciler } from "./reconciler.js";
import { createPhotoServer, type PhotoServer } from "./server.js";
import { API_PLAN_CACHE_MODE, type ApiConfig, apiSettings, apiTimeouts } from "./settings.js";

/** What a test or a drill changes in the service it starts; never a setting (apps/api/test/holding-commits.ts). */
export type ApiDaemonHooks = Pick<PostPhotoDependencies, "commitDelayMs">;

/**
 * The photo server on the daemon's settings, listening, with `postPhoto` behind POST /photos. The
 * bench's comparison (the same service without the outbox event) serves its own route through it.
 */
export async function listenPhotoServer(
  { config, log, database }: DaemonContext<ApiConfig>,
  metrics: ApiMetrics,
  post: PostPhoto,
): Promise<PhotoServer> {
  const server = createPhotoServer({
    pool: database.pool,
    postPhoto: post,
    metrics,
    log,
    headersTimeoutMs: config.headersTimeoutMs,
    handlerTimeoutMs: config.handlerTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
  });
  const port = await server.listen(config.host, config.port);
  log.info({ port, host: config.host }, "listening");
  return server;
}

async function startPhotoService(context: DaemonContext<ApiConfig>, hooks: ApiDaemonHooks) {
  const { config, log, database, metrics: registry } = context;
  const metrics = createApiMetrics(registry, photoDatabase(database.db));
  const equipment = createEquipmentClient({
    baseUrl: config.equipmentUrl,
    timeoutMs: config.equipmentTimeoutMs,
  });
  const server = await listenPhotoServer(context, metrics, (photo, deadline, idempotencyKey) =>
    postPhoto(
      {
        pool: database.pool,
        equipment,
        equipmentTimeoutMs: config.equipmentTimeoutMs,
        handlerTimeoutMs: config.handlerTimeoutMs,
        topic: config.photoTopic,
        ...hooks,
      },
      photo,
      deadline,
      idempotencyKey,
    ),
  );
  const reconciler =
    config.reconcileIntervalMs > 0
      ? startReconciler({
          ...reconcileOptions(config, { db: photoDatabase(database.db), equipment, log }),
          intervalMs: config.reconcileIntervalMs,
          onPass: (summary) => {
            metrics.reconciled.inc({ outcome: "linked" }, summary.linked);
            metrics.reconciled.inc({ outcome: "failed" }, summary.failed);
          },
        })
      : null;
  return { server, reconciler };
}

/** The photo service as a daemon: runDaemon owns the stop order (readiness, drain, ops, pool). */
export function runApiDaemon(hooks: ApiDaemonHooks = {}): Promise<never> {
  return runDaemon({
    service: "api",
    version: packageVersion(import.meta.url),
    settings: apiSettings,
    timeouts: apiTimeouts,
    planCacheMode: API_PLAN_CACHE_MODE,
    schema: apiSchema,
    // A request's statements run under its deadline (SET LOCAL statement_timeout), up to the handler cap.
    longestStatementMs: (config) => config.handlerTimeoutMs,
    async start(context) {
      const { server, reconciler } = await startPhotoService(context, hooks);
      const { log } = context;
      return {
        // The listener's own errors surface at start (listen); afterwards a request's error is its own.
        failure: new Promise<never>(() => {}),
        inFlight: () => ({ requests: server.inFlight() }),
        async drain(drainDeadline) {
          const [summary] = await Promise.all([server.stop(drainDeadline), reconciler?.stop()]);
          if (summary.clean) log.info(summary, "graceful shutdown complete");
          else log.warn(summary, "graceful shutdown cut requests at the drain deadline");
          return summary;
        },
      };
    },
  });
}
