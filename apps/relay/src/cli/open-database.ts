import {
  ConfigError,
  commonSettings,
  configErrorText,
  createDatabase,
  type DatabaseHandle,
  loadConfig,
} from "@outbox/shared";

/**
 * The database for a one-shot command: only DATABASE_URL, its TLS settings and the statement timeout
 * are read, so an operator can run it without the daemon's whole environment. Bad config (TLS settings
 * that cannot work included): one line per problem, null.
 */
export function openDatabase(command: string): DatabaseHandle | null {
  try {
    const config = loadConfig({
      databaseUrl: commonSettings.databaseUrl,
      dbSslMode: commonSettings.dbSslMode,
      dbSslCaFile: commonSettings.dbSslCaFile,
      dbStatementTimeoutMs: commonSettings.dbStatementTimeoutMs,
    });
    return createDatabase({
      url: config.databaseUrl,
      service: `relay-${command}`,
      poolMax: 1,
      statementTimeoutMs: config.dbStatementTimeoutMs,
      idleInTransactionTimeoutMs: config.dbStatementTimeoutMs,
      ssl: { mode: config.dbSslMode, caFile: config.dbSslCaFile },
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(configErrorText(`relay ${command}`, error));
    return null;
  }
}
