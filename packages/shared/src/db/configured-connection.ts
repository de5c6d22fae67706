import type { databaseSettings } from "../config/common-settings.js";
import type { ConfigOf } from "../config/setting.js";
import type { DatabaseSettings } from "./create-database.js";

/**
 * How DATABASE_URL and the DB_* connection settings reach the server, as `createDatabase` takes them:
 * the daemons and every one-shot command read them alike, and add the pool's own shape.
 */
export function configuredConnection(
  config: ConfigOf<typeof databaseSettings>,
): Pick<DatabaseSettings, "url" | "statementTimeoutMs" | "connectTimeoutMs" | "preparedStatements" | "ssl"> {
  return {
    url: config.databaseUrl,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    preparedStatements: config.dbPreparedStatements,
    ssl: { mode: config.dbSslMode, caFile: config.dbSslCaFile },
  };
}
