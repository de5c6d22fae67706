import { migrateToLatest } from "@outbox/client";
import { parseCommandLine, settingsUsage, usageError } from "../cli/command-line.js";
import { commonSettings, databaseSettings } from "../config/common-settings.js";
import { reportConfigErrors } from "../config/config-error.js";
import { EXIT_CONFIG, EXIT_CRASH } from "../lifecycle/exit-codes.js";
import { packageVersion } from "../lifecycle/package-version.js";
import { resolveConfig } from "../lifecycle/resolve-daemon-config.js";
import { createLogger } from "../log/logger.js";
import { createDatabase } from "./create-database.js";
import { migrateExampleTables } from "./example-migrations.js";

const settings = { ...databaseSettings, logLevel: commonSettings.logLevel };

const usage = `usage: pnpm migrate [--demo]   (in an image: node node_modules/@outbox/shared/dist/db/migrate-cli.js)

Applies every pending migration to DATABASE_URL and exits 0; 1 when a migration fails.

  --demo   then the demo's own migrations too (the example handlers' example_effects table,
           tracked in outbox_demo_migration); not for production

${settingsUsage(settings)}`;

const { values, positionals } = parseCommandLine(usage, { demo: { type: "boolean" } });
if (positionals.length > 0) usageError(usage, `unexpected argument: ${positionals.join(" ")}`);

// Every problem at once, the TLS settings' included (the same check as the daemons').
const config = reportConfigErrors("migrate", () => resolveConfig(settings, () => [], process.env));
if (config === undefined) process.exit(EXIT_CONFIG);
const handle = createDatabase({
  url: config.databaseUrl,
  service: "migrate",
  poolMax: 1,
  // DDL can wait on locks held by running daemons; give it longer than a daemon's statements.
  statementTimeoutMs: Math.max(config.dbStatementTimeoutMs, 60_000),
  connectTimeoutMs: config.dbConnectTimeoutMs,
  idleInTransactionTimeoutMs: 60_000,
  preparedStatements: config.dbPreparedStatements,
  ssl: { mode: config.dbSslMode, caFile: config.dbSslCaFile },
});
const log = createLogger({
  service: "migrate",
  version: packageVersion(import.meta.url),
  level: config.logLevel,
});
try {
  const results = await migrateToLatest(handle.db, log);
  // The demo's after the production list: production 0008 drops the demo's table.
  const demo = values.demo === true ? await migrateExampleTables(handle.db, log) : [];
  log.info({ applied: results.length + demo.length }, "migrations up to date");
} catch (error) {
  log.error({ err: error }, "migration failed");
  process.exitCode = EXIT_CRASH;
} finally {
  await handle.close(5_000);
}
