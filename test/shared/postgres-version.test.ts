import { postgresMajor } from "@outbox/devstack";
import type { DatabaseHandle } from "@outbox/shared";
import { createMigratedTestDatabase } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OLDEST_POSTGRES_MAJOR, tooOldPostgresLine } from "../../packages/shared/src/db/postgres-version.js";
import { missingSchemaLine } from "../../packages/shared/src/db/require-schema.js";

// CI runs the database-heavy files twice: on the stack's default Postgres (18) and, with
// POSTGRES_VERSION=13, on the oldest supported (vitest.postgres-oldest.config.ts).

let handle: DatabaseHandle;
beforeAll(async () => {
  ({ handle } = await createMigratedTestDatabase("postgres-version", {
    service: "version-test",
    poolMax: 1,
  }));
});
afterAll(async () => {
  await handle?.close(5_000);
});

describe("the Postgres versions we run on", () => {
  it("is the major POSTGRES_VERSION names that the stack runs, and a migrated database on it is fine to start on", async () => {
    const { rows } = await sql<{ num: number }>`
      SELECT current_setting('server_version_num')::int AS num
    `.execute(handle.db);
    expect(Math.floor((rows[0]?.num ?? 0) / 10_000)).toBe(postgresMajor());
    expect(await missingSchemaLine(handle.db, "relay")).toBeUndefined();
  });

  it("refuses a server older than 13 in one line that says why, and takes 13.0 and newer", () => {
    expect(tooOldPostgresLine("consumer", 120_022, "12.22")).toBe(
      "consumer: Postgres 12.22 is older than 13, the oldest supported (pg_current_xact_id and xid8 are 13's); upgrade the server, then start again\n",
    );
    expect(tooOldPostgresLine("consumer", OLDEST_POSTGRES_MAJOR * 10_000, "13.0")).toBeUndefined();
    expect(tooOldPostgresLine("consumer", 180_004, "18.4")).toBeUndefined();
  });
});
