import { type Kysely, sql } from "kysely";
import { BOOKKEEPING_ADOPTION_LOCK, OUTBOX_LOCK_SPACE } from "../protocol.js";

/** kysely's default bookkeeping table, where every set's rows lived before each had its own. */
export const DEFAULT_MIGRATION_TABLE = "kysely_migration";

/**
 * Moves the rows of `names` from kysely's default `kysely_migration` into `table`, and resolves with
 * the names moved. Releases up to 0.1 kept every set there; a set's own table is what lets an
 * application's own kysely migrations (which use the default) run beside ours. Moved, not copied: a
 * name of ours left in `kysely_migration` would make the application's Migrator report it missing.
 *
 * One transaction, under an advisory lock, so processes starting at once move the rows once and a
 * crash moves none. Idempotent: once moved, there is nothing left to move. `kysely_migration` and its
 * lock table stay: they may be the application's.
 */
export async function adoptDefaultBookkeeping<DB>(
  db: Kysely<DB>,
  table: string,
  names: readonly string[],
): Promise<readonly string[]> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${OUTBOX_LOCK_SPACE}, ${BOOKKEEPING_ADOPTION_LOCK})`.execute(trx);
    // to_regclass resolves the name as kysely does (unqualified, on the search_path); NULL when absent.
    const { rows } = await sql<{ present: boolean }>`
      SELECT to_regclass(${DEFAULT_MIGRATION_TABLE}) IS NOT NULL AS present
    `.execute(trx);
    if (rows[0]?.present !== true) return [];
    const legacy = await sql<{ name: string }>`
      SELECT name FROM ${sql.table(DEFAULT_MIGRATION_TABLE)} WHERE name = ANY(${[...names]})
    `.execute(trx);
    if (legacy.rows.length === 0) return [];
    // The columns kysely's Migrator creates, so it takes this table as its own.
    await sql`
      CREATE TABLE IF NOT EXISTS ${sql.table(table)} (
        name       varchar(255) NOT NULL PRIMARY KEY,
        timestamp  varchar(255) NOT NULL
      )
    `.execute(trx);
    // ON CONFLICT: a row both places hold (its set ran in its own table already) keeps its own.
    const moved = await sql<{ name: string }>`
      WITH moved AS (
        DELETE FROM ${sql.table(DEFAULT_MIGRATION_TABLE)} WHERE name = ANY(${[...names]})
        RETURNING name, timestamp
      )
      INSERT INTO ${sql.table(table)} (name, timestamp)
        SELECT name, timestamp FROM moved
        ON CONFLICT (name) DO NOTHING
      RETURNING name
    `.execute(trx);
    return moved.rows.map((row) => row.name).sort();
  });
}
