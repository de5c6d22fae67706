import {
  createDatabase,
  createLogger,
  EXIT_CONFIG,
  EXIT_OK,
  missingSchemaLine,
  packageVersion,
  reportConfigErrors,
  resolveConfig,
} from "@outbox/shared";
import { reconcileBackoffProblems } from "./api-timeouts.js";
import { photoDatabase } from "./db/connections.js";
import { apiSchema } from "./db/migrate.js";
import { createEquipmentClient } from "./equipment-client.js";
import { reconcileOptions, reconcilePendingLinks } from "./reconcile-links.js";
import { apiSettings } from "./settings.js";

/**
 * The variables `api reconcile` reads: the scheduled task's environment is made of these (infra/),
 * and the command's `--help` lists them. The database's TLS settings are the service's too, so the
 * task reaches RDS the way the service does.
 */
export const reconcileSettings = {
  databaseUrl: apiSettings.databaseUrl,
  dbStatementTimeoutMs: apiSettings.dbStatementTimeoutMs,
  dbPreparedStatements: apiSettings.dbPreparedStatements,
  dbSslMode: apiSettings.dbSslMode,
  dbSslCaFile: apiSettings.dbSslCaFile,
  logLevel: apiSettings.logLevel,
  equipmentUrl: apiSettings.equipmentUrl,
  equipmentTimeoutMs: apiSettings.equipmentTimeoutMs,
  reconcileBatchSize: apiSettings.reconcileBatchSize,
  reconcileBackoffBaseMs: apiSettings.reconcileBackoffBaseMs,
  reconcileBackoffMaxMs: apiSettings.reconcileBackoffMaxMs,
};

/**
 * The reconciliation job as a one-shot command (a scheduled ECS task): passes until the due pending
 * links are done, then exit 0. Its configuration is checked the way a daemon's is (every problem,
 * TLS included, one line each), and bad configuration exits 78.
 */
export async function runReconcileOnce(): Promise<number> {
  const config = reportConfigErrors("api reconcile", () =>
    resolveConfig(reconcileSettings, reconcileBackoffProblems, process.env),
  );
  if (config === undefined) return EXIT_CONFIG;
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
    preparedStatements: config.dbPreparedStatements,
    ssl: { mode: config.dbSslMode, caFile: config.dbSslCaFile },
  });
  const missingSchema = await missingSchemaLine(database.db, "api reconcile", apiSchema);
  if (missingSchema !== undefined) {
    process.stderr.write(missingSchema);
    await database.close(5_000);
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
    await database.close(5_000);
  }
}
