import { commonSettings, createDatabase } from "@outbox/shared";
import { createTestDatabase, waitUntil } from "@outbox/test-kit";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";

// The source document's last row, the pool's 300 s connection lifetime, at its default value: seen
// in Postgres (pg_stat_activity), not in the pool. database.test.ts has it at a 1 s setting.
const LIFETIME_S = commonSettings.dbPoolMaxLifetimeSeconds.default ?? Number.NaN;
/** A query this often: each shows which backend the pool serves with, and any failing fails the test. */
const QUERY_EVERY_MS = 5_000;
/** A late timer on a loaded machine (the main suite runs beside this one); far below a second lifetime. */
const SLACK_MS = 10_000;

describe("the pool's connection lifetime at its default", () => {
  it(
    `replaces a connection once it is ${LIFETIME_S} s old, not before, and no query fails meanwhile`,
    async () => {
      const url = await createTestDatabase("pool_lifetime");
      // One connection, so every query shows which connection the pool is serving with; the
      // lifetime is left at its default.
      const single = createDatabase({
        url,
        service: "lifetime-default",
        poolMax: 1,
        statementTimeoutMs: 5_000,
        idleInTransactionTimeoutMs: 10_000,
      });
      const servingConnection = async () => {
        const { rows } = await sql<{ pid: number; startedMs: number }>`
          SELECT pid, (extract(epoch FROM backend_start) * 1000)::float8 AS "startedMs"
          FROM pg_stat_activity WHERE pid = pg_backend_pid()
        `.execute(single.db);
        if (rows[0] === undefined) throw new Error("pg_stat_activity has no row for the serving backend");
        return rows[0];
      };
      try {
        const first = await servingConnection();
        let latest = first;
        let queries = 1;
        await waitUntil(
          "the pool to serve from a new connection",
          async () => {
            latest = await servingConnection();
            queries += 1;
            return latest.pid !== first.pid;
          },
          { timeoutMs: LIFETIME_S * 1_000 + SLACK_MS * 3, intervalMs: QUERY_EVERY_MS },
        );
        // Served all along, by the first backend until its lifetime.
        expect(queries).toBeGreaterThan((LIFETIME_S * 1_000) / QUERY_EVERY_MS - 1);
        // By Postgres' clock: the new backend started at the lifetime, not before, and by the first
        // query after it (the pool closes an idle connection at its lifetime, opens the next on use).
        const replacedAfterMs = latest.startedMs - first.startedMs;
        expect(replacedAfterMs).toBeGreaterThanOrEqual(LIFETIME_S * 1_000);
        expect(replacedAfterMs).toBeLessThan(LIFETIME_S * 1_000 + QUERY_EVERY_MS + SLACK_MS);
        const { rows } = await sql<{ open: number }>`
          SELECT count(*)::int AS open FROM pg_stat_activity WHERE pid = ${first.pid}
        `.execute(single.db);
        expect(rows[0]?.open).toBe(0);
      } finally {
        await single.close(5_000);
      }
    },
    LIFETIME_S * 1_000 + SLACK_MS * 4,
  );
});
