import { commonSettings } from "@outbox/shared";
import { createTestDatabase } from "@outbox/test-kit";
import { describe, expect, it } from "vitest";
import { watchPoolReplacement } from "./pool-replacement.js";

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
      const { first, next, queries, firstStillOpen } = await watchPoolReplacement(url, {
        queryEveryMs: QUERY_EVERY_MS,
        timeoutMs: LIFETIME_S * 1_000 + SLACK_MS * 3,
      });
      // Served all along, by the first backend until its lifetime.
      expect(queries).toBeGreaterThan((LIFETIME_S * 1_000) / QUERY_EVERY_MS - 1);
      // By Postgres' clock: the new backend started at the lifetime, not before, and by the first
      // query after it (the pool closes an idle connection at its lifetime, opens the next on use).
      const replacedAfterMs = next.startedMs - first.startedMs;
      expect(replacedAfterMs).toBeGreaterThanOrEqual(LIFETIME_S * 1_000);
      expect(replacedAfterMs).toBeLessThan(LIFETIME_S * 1_000 + QUERY_EVERY_MS + SLACK_MS);
      expect(firstStillOpen).toBe(0);
    },
    LIFETIME_S * 1_000 + SLACK_MS * 4,
  );
});
