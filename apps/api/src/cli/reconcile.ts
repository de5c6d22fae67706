import {
  configuredConnection,
  createDatabase,
  createLogger,
  databaseSettings,
  EXIT_CONFIG,
  EXIT_OK,
  findBudgetProblems,
  missingSchemaLine,
  packageVersion,
  probedDatabase,
  reportConfigErrors,
  resolveConfig,
} from "@outbox/shared";
import { photoDatabase } from "../db/connections.js";
import { apiSchema } from "../db/migrate.js";
import { createEquipmentClient } from "../equipment-client.js";
import { reconcileOptions, reconcilePendingLinks } from "../reconcile-links.js";
import { apiSettings, checkApi, variableOf } from "../settings.js";

/**
 * The variables `api reconcile` reads: the scheduled task's environment is made of these (infra/),
 * and the command's `--help` lists them. The database's are every one-shot command's (TLS included,
 * so the task reaches RDS the way the service does), with the service's pool size: a pass links up
 * to a batch of links at once, each recording its outcome, as it does inside the service.
 */
export const reconcileSettings = {
  ...databaseSettings,
  dbPoolMax: apiSettings.dbPoolMax,
  dbPoolMaxLifetimeSeconds: apiSettings.dbPoolMaxLifetimeSeconds,
  logLevel: apiSettings.logLevel,
  equipmentUrl: apiSettings.equipmentUrl,
  equipmentTimeoutMs: apiSettings.equipmentTimeoutMs,
  reconcileBatchSize: apiSettings.reconcileBatchSize,
  reconcileBackoffBaseMs: apiSettings.reconcileBackoffBaseMs,
  reconcileBackoffMaxMs: apiSettings.reconcileBackoffMaxMs,
};

/**
 * The reconciliation job as a one-shot command (a scheduled ECS task): passes until the due pending
 * links are done, then exit 0. Its configuration is checked the way the service's is, by the same
 * rules on its subset (every problem, TLS included, one line each), and bad configuration exits 78.
 */
export async function runReconcile(): Promise<number> {
  const config = reportConfigErrors("api reconcile", () =>
    resolveConfig(
      reconcileSettings,
      (values) => {
        const { rules, problems } = checkApi(values, variableOf);
        return [...problems, ...findBudgetProblems(rules)];
      },
      process.env,
    ),
  );
  if (config === undefined) return EXIT_CONFIG;
  const log = createLogger({
    service: "api-reconcile",
    version: packageVersion(import.meta.url),
    level: config.logLevel,
  });
  const settings = {
    ...configuredConnection(config),
    service: "api-reconcile",
    poolMax: config.dbPoolMax,
    poolMaxLifetimeSeconds: config.dbPoolMaxLifetimeSeconds,
    idleInTransactionTimeoutMs: config.dbStatementTimeoutMs,
  };
  const database = await probedDatabase(createDatabase(settings), settings, log);
  // A statement still running when the command ends gets its own timeout to finish.
  const closeWithinMs = config.dbStatementTimeoutMs;
  const missingSchema = await missingSchemaLine(database.db, "api reconcile", apiSchema);
  if (missingSchema !== undefined) {
    process.stderr.write(missingSchema);
    await database.close(closeWithinMs);
    return EXIT_CONFIG;
  }
  const equipment = createEquipmentClient({
    baseUrl: config.equipmentUrl,
    timeoutMs: config.equipmentTimeoutMs,
  });
  const totals = { attempted: 0, linked: 0, failed: 0 };
  try {
    for (;;) {
      const pass = await reconcilePendingLinks(
        reconcileOptions(config, { db: photoDatabase(database.db), equipment, log }),
      );
      totals.attempted += pass.attempted;
      totals.linked += pass.linked;
      totals.failed += pass.failed;
      if (pass.attempted < config.reconcileBatchSize) break;
    }
    log.info(totals, "reconciliation done");
    return EXIT_OK;
  } finally {
    await database.close(closeWithinMs);
  }
}
