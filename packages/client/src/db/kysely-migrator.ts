import * as kysely from "kysely";

/**
 * kysely's Migrator across the peer range. 0.29 moved it (and its types) to `kysely/migration`,
 * leaving type errors under the old names; 0.28 has no `kysely/migration`. So the package names
 * its own structural types for what it hands out, and finds the class where the installed kysely
 * keeps it.
 */

/** One migration, as kysely's Migrator runs it. Method syntax: a migration typed to the application's schema fits. */
export interface Migration {
  up(db: kysely.Kysely<unknown>): Promise<void>;
  down?(db: kysely.Kysely<unknown>): Promise<void>;
}

/** What kysely reports for one migration it ran (or did not). */
export interface MigrationResult {
  readonly migrationName: string;
  readonly direction: "Up" | "Down";
  readonly status: "Success" | "Error" | "NotExecuted";
}

/** The part of kysely's Migrator this package and `runMigrator` use. */
export interface MigratorLike {
  migrateToLatest(): Promise<{ readonly error?: unknown; readonly results?: readonly MigrationResult[] }>;
  getMigrations(): Promise<readonly { readonly name: string; readonly executedAt?: Date }[]>;
}

export interface MigratorOptions<DB> {
  readonly db: kysely.Kysely<DB>;
  readonly migrations: Readonly<Record<string, Migration>>;
  readonly migrationTableName: string;
  readonly migrationLockTableName: string;
}

type MigratorClass = new (props: {
  db: unknown;
  provider: { getMigrations(): Promise<Record<string, Migration>> };
  migrationTableName: string;
  migrationLockTableName: string;
}) => MigratorLike;

let located: Promise<MigratorClass> | undefined;

function locateMigrator(): Promise<MigratorClass> {
  located ??= (async () => {
    // A namespace read, not a named import: on 0.29 the name is absent at run time.
    const atRoot = (kysely as { Migrator?: unknown }).Migrator;
    if (typeof atRoot === "function") return atRoot as MigratorClass;
    // A variable, so that type-checking against 0.28 does not look the subpath up.
    const subpath = "kysely/migration";
    return ((await import(subpath)) as { Migrator: MigratorClass }).Migrator;
  })();
  return located;
}

export async function createMigrator<DB>(options: MigratorOptions<DB>): Promise<MigratorLike> {
  const Migrator = await locateMigrator();
  return new Migrator({
    db: options.db,
    provider: { getMigrations: async () => ({ ...options.migrations }) },
    migrationTableName: options.migrationTableName,
    migrationLockTableName: options.migrationLockTableName,
  });
}
