import { parseCommandLine, usageError } from "../cli/command-line.js";
import { commonSettings } from "../config/common-settings.js";
import { ConfigError, configErrorText } from "../config/config-error.js";
import { loadConfig } from "../config/load-config.js";
import { packageVersion } from "../lifecycle/package-version.js";
import { EXIT_CONFIG } from "../lifecycle/run-daemon.js";
import { createLogger } from "../log/logger.js";
import { createDatabase } from "./create-database.js";
import { migrateToLatest } from "./migrate.js";

const usage = `usage: pnpm migrate   (in an image: node node_modules/@outbox/shared/dist/db/migrate-cli.js)

Applies every pending migration to DATABASE_URL and exits 0; 1 when a migration fails.
Reads DATABASE_URL, DB_SSL_MODE, DB_SSL_CA_FILE, DB_STATEMENT_TIMEOUT_MS and LOG_LEVEL; invalid
configuration exits 78.`;

const { positionals } = parseCommandLine(usage, {});
if (positionals.length > 0) usageError(usage, `unexpected argument: ${positionals.join(" ")}`);

const { handle, logLevel } = (() => {
  try {
    const config = loadConfig({
      databaseUrl: commonSettings.databaseUrl,
      dbSslMode: commonSettings.dbSslMode,
      dbSslCaFile: commonSettings.dbSslCaFile,
      dbStatementTimeoutMs: commonSettings.dbStatementTimeoutMs,
      logLevel: commonSettings.logLevel,
    });
    // Throws a ConfigError too, when the TLS settings cannot work.
    const database = createDatabase({
      url: config.databaseUrl,
      service: "migrate",
      poolMax: 1,
      // DDL can wait on locks held by running daemons; give it longer than a daemon's statements.
      statementTimeoutMs: Math.max(config.dbStatementTimeoutMs, 60_000),
      idleInTransactionTimeoutMs: 60_000,
      ssl: { mode: config.dbSslMode, caFile: config.dbSslCaFile },
    });
    return { handle: database, logLevel: config.logLevel };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(configErrorText("migrate", error));
    process.exit(EXIT_CONFIG);
  }
})();
const log = createLogger({ service: "migrate", version: packageVersion(import.meta.url), level: logLevel });
try {
  const results = await migrateToLatest(handle.db, log);
  log.info({ applied: results.length }, "migrations up to date");
} catch (error) {
  log.error({ err: error }, "migration failed");
  process.exitCode = 1;
} finally {
  await handle.close(5_000);
}
