import { type ClientLogger, type MigrationResult, migrateToLatest, type OutboxTables } from "@outbox/client";
import type { Kysely } from "kysely";
import { parseCommandLine, settingsUsage, usageError } from "../cli/command-line.js";
import { commonSettings, databaseSettings } from "../config/common-settings.js";
import { reportConfigErrors } from "../config/config-error.js";
import { EXIT_CONFIG, EXIT_CRASH, EXIT_OK } from "../lifecycle/exit-codes.js";
import { packageVersion } from "../lifecycle/package-version.js";
import { resolveConfig } from "../lifecycle/resolve-daemon-config.js";
import { createLogger } from "../log/logger.js";
import { configuredConnection } from "./configured-connection.js";
import { createDatabase } from "./create-database.js";
import { migrateExampleTables } from "./example-migrations.js";
import { probedDatabase } from "./transaction-pooler.js";

/** What a migrate command reads: the database's settings and the log level. */
export const migrateSettings = { ...databaseSettings, logLevel: commonSettings.logLevel };

export type ApplyMigrations = (
  db: Kysely<OutboxTables>,
  log?: ClientLogger,
) => Promise<readonly MigrationResult[]>;

/** A migration set a migrate command applies when its flag is given, after the outbox's. */
export interface OptionalMigrations {
  /** The flag's help, under the usage line. */
  readonly help: string;
  readonly apply: ApplyMigrations;
}

/**
 * Opens DATABASE_URL for DDL, applies `steps` in order and resolves with the exit code: 0 when
 * every step is done, 1 when a migration fails, 78 on bad configuration (every problem listed).
 */
export async function applyMigrations(
  program: string,
  steps: readonly ApplyMigrations[],
  version: string,
): Promise<number> {
  // Every problem at once, the TLS settings' included (the same check as the daemons').
  const config = reportConfigErrors(program, () => resolveConfig(migrateSettings, () => [], process.env));
  if (config === undefined) return EXIT_CONFIG;
  const log = createLogger({ service: program.replaceAll(" ", "-"), version, level: config.logLevel });
  const settings = {
    ...configuredConnection(config),
    service: program.replaceAll(" ", "-"),
    poolMax: 1,
    // DDL can wait on locks held by running daemons; give it longer than a daemon's statements.
    statementTimeoutMs: Math.max(config.dbStatementTimeoutMs, 60_000),
    idleInTransactionTimeoutMs: 60_000,
  };
  // Kysely's migration lock is transaction-scoped, so a transaction pooler needs only the pool's switch.
  const handle = await probedDatabase(createDatabase(settings), settings, log);
  try {
    let applied = 0;
    for (const step of steps) applied += (await step(handle.db, log)).length;
    log.info({ applied }, "migrations up to date");
    return EXIT_OK;
  } catch (error) {
    log.error({ err: error }, "migration failed");
    return EXIT_CRASH;
  } finally {
    await handle.close(5_000);
  }
}

/**
 * `pnpm migrate`: the outbox's migrations, then those whose flags are given: `--demo` (the demo's
 * own) and the `optional` ones of the entry point (e.g. `--api`). `image` is how it is run inside an
 * image.
 */
export async function runMigrateCommand(
  image: string,
  optional: Readonly<Record<string, OptionalMigrations>> = {},
): Promise<number> {
  const sets: Record<string, OptionalMigrations> = {
    demo: {
      help: `then the demo's own migrations too (the example handlers' example_effects table,
           tracked in outbox_demo_migration); not for production`,
      // The demo's after the production list: production 0008 drops the demo's table.
      apply: migrateExampleTables,
    },
    ...optional,
  };
  const flags = Object.keys(sets);
  const usage = `usage: pnpm migrate ${flags.map((flag) => `[--${flag}]`).join(" ")}   (in an image: ${image})

Applies every pending migration to DATABASE_URL and exits 0; 1 when a migration fails.

${Object.entries(sets)
  .map(([flag, set]) => `  --${flag.padEnd(6)} ${set.help}`)
  .join("\n")}

${settingsUsage(migrateSettings)}`;
  const { values, positionals } = parseCommandLine(
    usage,
    Object.fromEntries(flags.map((flag) => [flag, { type: "boolean" as const }])),
  );
  if (positionals.length > 0) usageError(usage, `unexpected argument: ${positionals.join(" ")}`);
  const chosen = Object.entries(sets)
    .filter(([flag]) => values[flag] === true)
    .map(([, set]) => set.apply);
  return applyMigrations("migrate", [migrateToLatest, ...chosen], packageVersion(import.meta.url));
}
