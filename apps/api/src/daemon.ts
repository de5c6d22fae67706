import { type DaemonContext, packageVersion, runDaemon } from "@outbox/shared";
import { apiTimeouts } from "./api-timeouts.js";
import { createEquipmentClient } from "./equipment-client.js";
import { createApiMetrics } from "./metrics.js";
import { postPhoto } from "./post-photo.js";
import { reconcileOptions } from "./reconcile-links.js";
import { startReconciler } from "./reconciler.js";
import { createPhotoServer } from "./server.js";
import { API_PLAN_CACHE_MODE, type ApiConfig, apiSettings } from "./settings.js";

async function startPhotoService({ config, log, database, metrics: registry }: DaemonContext<ApiConfig>) {
  const metrics = createApiMetrics(registry, database.db);
  const equipment = createEquipmentClient({
    baseUrl: config.equipmentUrl,
    timeoutMs: config.equipmentTimeoutMs,
  });
  const server = createPhotoServer({
    db: database.db,
    postPhoto: (photo, deadline) =>
      postPhoto(
        {
          db: database.db,
          equipment,
          equipmentTimeoutMs: config.equipmentTimeoutMs,
          topic: config.photoTopic,
          commitDelayMs: config.commitDelayMs,
        },
        photo,
        deadline,
      ),
    metrics,
    log,
    headersTimeoutMs: config.headersTimeoutMs,
    handlerTimeoutMs: config.handlerTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
  });
  const port = await server.listen(config.host, config.port);
  log.info({ port, host: config.host }, "listening");
  const reconciler =
    config.reconcileIntervalMs > 0
      ? startReconciler({
          ...reconcileOptions(config, { db: database.db, equipment, log }),
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
export function runApiDaemon(): Promise<never> {
  return runDaemon({
    service: "api",
    version: packageVersion(import.meta.url),
    settings: apiSettings,
    timeouts: apiTimeouts,
    planCacheMode: API_PLAN_CACHE_MODE,
    async start(context) {
      const { server, reconciler } = await startPhotoService(context);
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
