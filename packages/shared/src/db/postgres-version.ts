import { type Kysely, sql } from "kysely";

/**
 * The oldest Postgres major our SQL runs on: 13, for `pg_current_xact_id()` and `xid8` (the
 * consumer's and the api's transactions check with them that they commit the transaction they
 * opened; deadline-transaction.ts). The claim's `AS MATERIALIZED` needs 12, the indexes' `INCLUDE`
 * and the triggers' `EXECUTE FUNCTION` 11. CI runs the database-heavy tests on 13 and on 18.
 */
export const OLDEST_POSTGRES_MAJOR = 13;

/** The line a program prints instead of starting on a Postgres older than 13; undefined on 13 or newer. */
export function tooOldPostgresLine(
  program: string,
  serverVersionNum: number,
  serverVersion: string,
): string | undefined {
  if (serverVersionNum >= OLDEST_POSTGRES_MAJOR * 10_000) return undefined;
  return `${program}: Postgres ${serverVersion} is older than ${OLDEST_POSTGRES_MAJOR}, the oldest supported (pg_current_xact_id and xid8 are ${OLDEST_POSTGRES_MAJOR}'s); upgrade the server, then start again\n`;
}

/** {@link tooOldPostgresLine} for the server `db` is connected to. Rejects when it cannot be asked. */
export async function tooOldPostgresLineOf<DB>(db: Kysely<DB>, program: string): Promise<string | undefined> {
  const { rows } = await sql<{ num: number; version: string }>`
    SELECT current_setting('server_version_num')::int AS num, current_setting('server_version') AS version
  `.execute(db);
  const server = rows[0];
  return server === undefined ? undefined : tooOldPostgresLine(program, server.num, server.version);
}
