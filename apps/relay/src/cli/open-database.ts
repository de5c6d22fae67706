import {
  createDatabase,
  type DatabaseHandle,
  databaseSettings,
  reportConfigErrors,
  resolveConfig,
} from "@outbox/shared";

/**
 * What `relay status`, `relay requeue-dead` and `relay skip-dead` read: the database and nothing else,
 * so that an operator can run them without the daemon's whole environment. Their `--help` lists these.
 */
export const commandSettings = databaseSettings;

/**
 * The database for a one-shot command. Bad config (TLS settings that cannot work included, checked
 * together with the rest like a daemon's): one line per problem, null.
 */
export function openDatabase(command: string): DatabaseHandle | null {
  const config = reportConfigErrors(`relay ${command}`, () =>
    resolveConfig(commandSettings, () => [], process.env),
  );
  if (config === undefined) return null;
  return createDatabase({
    url: config.databaseUrl,
    service: `relay-${command}`,
    poolMax: 1,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    idleInTransactionTimeoutMs: config.dbStatementTimeoutMs,
    preparedStatements: config.dbPreparedStatements,
    ssl: { mode: config.dbSslMode, caFile: config.dbSslCaFile },
  });
}
