import {
  type ConfigOf,
  configuredConnection,
  createDatabase,
  createLogger,
  type DatabaseHandle,
  databaseSettings,
  type Logger,
  missingSchemaLine,
  probedDatabase,
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
 * together with the rest like a daemon's), or a database that lacks migrations: one line per
 * problem, null.
 */
export async function openDatabase(command: string): Promise<DatabaseHandle | null> {
  const program = `relay ${command}`;
  const config = reportConfigErrors(program, () => resolveConfig(commandSettings, () => [], process.env));
  if (config === undefined) return null;
  return connectDatabase(command, config);
}

/** One connection to a database whose schema is current; else its line on stderr, null. */
export async function connectDatabase(
  command: string,
  config: ConfigOf<typeof databaseSettings>,
  log: Logger = createLogger({
    service: `relay-${command}`,
    version: "",
    level: "warn",
    destination: process.stderr,
  }),
): Promise<DatabaseHandle | null> {
  const program = `relay ${command}`;
  const settings = {
    ...configuredConnection(config),
    service: `relay-${command}`,
    poolMax: 1,
    idleInTransactionTimeoutMs: config.dbStatementTimeoutMs,
  };
  // Through a transaction pooler, a pool that works there (probedDatabase says so at info).
  const database = await probedDatabase(createDatabase(settings), settings, log);
  const missingSchema = await missingSchemaLine(database.db, program);
  if (missingSchema === undefined) return database;
  process.stderr.write(missingSchema);
  await database.close(config.dbStatementTimeoutMs);
  return null;
}
