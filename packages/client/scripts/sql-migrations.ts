import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from "kysely";
import { migrations } from "../src/db/migrations/index.js";
import { OUTBOX_MIGRATION_LOCK_TABLE, OUTBOX_MIGRATION_TABLE } from "../src/protocol.js";

/**
 * The outbox's kysely migrations as plain SQL files (packages/client/sql), for an application whose
 * migrations run on Flyway, node-pg-migrate, Prisma migrate or psql: one file per migration, named
 * the way Flyway versions them (`V0001__outbox_and_inbox.sql`). Written by running each migration's
 * `up` against a Kysely that records the statements instead of sending them, so a file says exactly
 * what the migration does (the constants its SQL inlines included). test/shared/sql-migrations.test.ts
 * checks that the files are what this makes, and that they build the schema the migrations build.
 */

/** Records every statement; runs none. A migration only sends statements and awaits them. */
class RecordingConnection implements DatabaseConnection {
  readonly statements: string[] = [];

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // A parameter would be lost in a file: the migrations' SQL inlines its values (sql.lit).
    if (query.parameters.length > 0) throw new Error(`a migration statement has parameters: ${query.sql}`);
    // As sent, indentation and all: a function's body is stored as its text, and must be the same
    // text whichever way it was created.
    this.statements.push(query.sql.trim());
    return { rows: [] };
  }

  // biome-ignore lint/correctness/useYield: migrations stream nothing
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("a migration streamed a query");
  }
}

function recordingKysely(connection: RecordingConnection): Kysely<unknown> {
  const driver: Driver = {
    init: async () => {},
    acquireConnection: async () => connection,
    beginTransaction: async () => {},
    commitTransaction: async () => {},
    rollbackTransaction: async () => {},
    releaseConnection: async () => {},
    destroy: async () => {},
  };
  return new Kysely<unknown>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
}

/**
 * The bookkeeping `migrateToLatest` keeps (kysely's Migrator, in tables of our own): a database
 * migrated by these files is one `pendingMigrations` finds current, the daemons start on, and
 * `migrateToLatest` later continues from. The tables as kysely creates them, if not there yet.
 */
function bookkeeping(name: string): string {
  return `-- Bookkept as migrateToLatest does (kysely's Migrator, in the outbox's own tables), so that
-- pendingMigrations() finds this migration applied and migrateToLatest() never runs it again.
CREATE TABLE IF NOT EXISTS ${OUTBOX_MIGRATION_TABLE} (
  "name" varchar(255) NOT NULL PRIMARY KEY,
  "timestamp" varchar(255) NOT NULL
);
CREATE TABLE IF NOT EXISTS ${OUTBOX_MIGRATION_LOCK_TABLE} (
  "id" varchar(255) NOT NULL PRIMARY KEY,
  "is_locked" integer NOT NULL DEFAULT 0
);
INSERT INTO ${OUTBOX_MIGRATION_LOCK_TABLE} ("id", "is_locked") VALUES ('migration_lock', 0)
  ON CONFLICT ("id") DO NOTHING;
-- kysely writes the time as an ISO 8601 UTC string.
INSERT INTO ${OUTBOX_MIGRATION_TABLE} ("name", "timestamp")
  VALUES ('${name}', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));
`;
}

export interface SqlMigrationFile {
  /** e.g. `V0001__outbox_and_inbox.sql`: Flyway's `V<version>__<description>.sql`. */
  readonly file: string;
  readonly text: string;
}

/** Every migration as its SQL file, in order. */
export async function sqlMigrationFiles(): Promise<SqlMigrationFile[]> {
  const files: SqlMigrationFile[] = [];
  for (const [name, migration] of Object.entries(migrations)) {
    const match = /^(\d{4})_(\w+)$/.exec(name);
    if (match === null) throw new Error(`migration name ${name} is not NNNN_words`);
    const connection = new RecordingConnection();
    await migration.up(recordingKysely(connection));
    const file = `V${match[1]}__${match[2]}.sql`;
    const text = `-- ${file}: the outbox migration ${name} as plain SQL.
-- Generated from packages/client/src/db/migrations/${name}.ts (why each statement is what it is)
-- by packages/client/scripts/write-sql-migrations.ts: do not edit. Apply the files in order, each in
-- one transaction, and none twice: migrateToLatest() and these files bookkeep alike (below).

${connection.statements.map((statement) => `${statement};\n`).join("\n")}
${bookkeeping(name)}`;
    files.push({ file, text });
  }
  return files;
}
