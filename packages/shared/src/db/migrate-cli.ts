import { commonSettings } from "../config/common-settings.js";
import { ConfigError } from "../config/config-error.js";
import { loadConfig } from "../config/load-config.js";
import { packageVersion } from "../lifecycle/package-version.js";
import { createLogger } from "../log/logger.js";
import { createDatabase } from "./create-database.js";
import { migrateToLatest } from "./migrate.js";

// `pnpm migrate`: applies every pending migration to DATABASE_URL and exits.
const { databaseUrl, dbStatementTimeoutMs, logLevel } = (() => {
  try {
    return loadConfig({
      databaseUrl: commonSettings.databaseUrl,
      dbStatementTimeoutMs: commonSettings.dbStatementTimeoutMs,
      logLevel: commonSettings.logLevel,
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems)
      process.stderr.write(`config: ${problem.env}: ${problem.message}\n`);
    process.exit(78);
  }
})();
const log = createLogger({ service: "migrate", version: packageVersion(import.meta.url), level: logLevel });
const handle = createDatabase({
  url: databaseUrl,
  service: "migrate",
  poolMax: 1,
  // DDL can wait on locks held by running daemons; give it longer than a daemon's statements.
  statementTimeoutMs: Math.max(dbStatementTimeoutMs, 60_000),
  idleInTransactionTimeoutMs: 60_000,
});
try {
  const results = await migrateToLatest(handle.db, log);
  log.info({ applied: results.length }, "migrations up to date");
} catch (error) {
  log.error({ err: error }, "migration failed");
  process.exitCode = 1;
} finally {
  await handle.close(5_000);
}
