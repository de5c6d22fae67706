import { ConfigError, commonSettings, createDatabase, type DatabaseHandle, loadConfig } from "@outbox/shared";

/**
 * The database for a one-shot command: only DATABASE_URL and the statement timeout are read, so an
 * operator can run it without the daemon's whole environment. Bad config: one line per problem, null.
 */
export function openDatabase(command: string): DatabaseHandle | null {
  try {
    const config = loadConfig({
      databaseUrl: commonSettings.databaseUrl,
      dbStatementTimeoutMs: commonSettings.dbStatementTimeoutMs,
    });
    return createDatabase({
      url: config.databaseUrl,
      service: `relay-${command}`,
      poolMax: 1,
      statementTimeoutMs: config.dbStatementTimeoutMs,
      idleInTransactionTimeoutMs: config.dbStatementTimeoutMs,
    });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) {
      process.stderr.write(`relay ${command}: config error: ${problem.env}: ${problem.message}\n`);
    }
    return null;
  }
}
