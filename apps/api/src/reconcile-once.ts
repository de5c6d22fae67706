import {
  ConfigError,
  type ConfigOf,
  createDatabase,
  createLogger,
  EXIT_CONFIG,
  loadConfig,
  packageVersion,
} from "@outbox/shared";
import { createEquipmentClient } from "./equipment-client.js";
import { reconcileOptions, reconcilePendingLinks } from "./reconcile-links.js";
import { apiSettings } from "./settings.js";

/** The variables `api reconcile` reads: the scheduled task's environment is made of these. */
export const reconcileSettings = {
  databaseUrl: apiSettings.databaseUrl,
  dbStatementTimeoutMs: apiSettings.dbStatementTimeoutMs,
  logLevel: apiSettings.logLevel,
  equipmentUrl: apiSettings.equipmentUrl,
  equipmentTimeoutMs: apiSettings.equipmentTimeoutMs,
  reconcileBatchSize: apiSettings.reconcileBatchSize,
  reconcileBackoffBaseMs: apiSettings.reconcileBackoffBaseMs,
  reconcileBackoffMaxMs: apiSettings.reconcileBackoffMaxMs,
};

/**
 * The reconciliation job as a one-shot command (a scheduled ECS task): passes until the due pending
 * links are done, then exit 0. Only the variables it needs are read; bad ones exit 78.
 */
export async function runReconcileOnce(): Promise<number> {
  let config: ConfigOf<typeof reconcileSettings>;
  try {
    config = loadConfig(reconcileSettings);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) {
      process.stderr.write(`api reconcile: config error: ${problem.env}: ${problem.message}\n`);
    }
    return EXIT_CONFIG;
  }
  const log = createLogger({
    service: "api-reconcile",
    version: packageVersion(import.meta.url),
    level: config.logLevel,
  });
  const database = createDatabase({
    url: config.databaseUrl,
    service: "api-reconcile",
    poolMax: 4,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    idleInTransactionTimeoutMs: config.dbStatementTimeoutMs,
  });
  const equipment = createEquipmentClient({
    baseUrl: config.equipmentUrl,
    timeoutMs: config.equipmentTimeoutMs,
  });
  const totals = { attempted: 0, linked: 0, failed: 0 };
  try {
    for (;;) {
      const pass = await reconcilePendingLinks(reconcileOptions(config, { db: database.db, equipment, log }));
      totals.attempted += pass.attempted;
      totals.linked += pass.linked;
      totals.failed += pass.failed;
      if (pass.attempted < config.reconcileBatchSize) break;
    }
    log.info(totals, "reconciliation done");
    return 0;
  } finally {
    await database.close(5_000);
  }
}
