import { migrateToLatest, migrations } from "@outbox/client";
import {
  createDatabase,
  type DatabaseHandle,
  EXAMPLE_MIGRATION_TABLE,
  migrateExampleTables,
} from "@outbox/shared";
import { createTestDatabase } from "@outbox/test-kit";
import { Migrator, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let handle: DatabaseHandle;

beforeAll(async () => {
  handle = createDatabase({
    url: await createTestDatabase("shared_demo_migrations"),
    service: "shared-test",
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 10_000,
  });
});
afterAll(async () => {
  await handle.close(5_000);
});

async function tables(): Promise<string[]> {
  const result = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name
  `.execute(handle.db);
  return result.rows.map((row) => row.table_name);
}

// In order: each step starts from the database the one before left.
describe("the demo's example_effects", () => {
  it("is not left by the production migrations: 0003 creates it, 0008 drops it", async () => {
    const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations } });
    expect((await migrator.migrateTo("0003_consumer_example_effects")).error).toBeUndefined();
    expect(await tables()).toContain("example_effects");

    await migrateToLatest(handle.db);
    const production = await tables();
    expect(production).toEqual(expect.arrayContaining(["inbox", "outbox"]));
    expect(production).not.toContain("example_effects");
    expect(production).not.toContain(EXAMPLE_MIGRATION_TABLE);
  });

  it("comes from the demo's own migrations, tracked apart from the production ones", async () => {
    const applied = await migrateExampleTables(handle.db);
    expect(applied.map((result) => [result.migrationName, result.status])).toEqual([
      ["0001_example_effects", "Success"],
    ]);
    expect(await tables()).toEqual(
      expect.arrayContaining(["example_effects", "outbox_demo_migration", "outbox_demo_migration_lock"]),
    );
    await sql`
      INSERT INTO example_effects (event_id, event_type, payload)
      VALUES (gen_random_uuid(), 'example.created', '{}')
    `.execute(handle.db);

    // Both sets up to date: neither applies anything again, and the demo's row stays.
    expect(await migrateToLatest(handle.db)).toEqual([]);
    expect(await migrateExampleTables(handle.db)).toEqual([]);
    const count = await sql<{ n: number }>`SELECT count(*)::int AS n FROM example_effects`.execute(handle.db);
    expect(count.rows[0]?.n).toBe(1);
  });
});
