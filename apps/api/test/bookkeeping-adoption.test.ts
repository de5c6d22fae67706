import {
  migrateSetToLatest,
  migrateToLatest,
  migrations,
  pendingMigrations,
  pendingMigrationsIn,
} from "@outbox/client";
import { createDatabase, type DatabaseHandle } from "@outbox/shared";
import { createTestDatabase } from "@outbox/test-kit";
import { Migrator, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { photoMigrations } from "../src/db/migrations/index.js";

/**
 * A database migrated before the sets had bookkeeping of their own: all eleven migrations (the
 * outbox's and the photo service's, as they were one list) in kysely's default `kysely_migration`.
 * After the upgrade each set finds its migrations applied, in its own table, and runs none again.
 */
describe("a database migrated into kysely_migration by the release before", () => {
  let url: string;
  const handles: DatabaseHandle[] = [];
  const open = () => {
    const handle = createDatabase({
      url,
      service: "adoption-test",
      poolMax: 2,
      statementTimeoutMs: 10_000,
      idleInTransactionTimeoutMs: 10_000,
    });
    handles.push(handle);
    return handle;
  };
  const names = async (handle: DatabaseHandle, table: string) =>
    (
      await sql<{
        name: string;
        timestamp: string;
      }>`SELECT name, timestamp FROM ${sql.table(table)} ORDER BY name`.execute(handle.db)
    ).rows;
  const everyMigration = { ...migrations, ...photoMigrations.migrations };
  let before: { name: string; timestamp: string }[];

  beforeAll(async () => {
    url = await createTestDatabase("adoption");
    const handle = open();
    // Exactly what the release before ran: one Migrator, kysely's default tables, one list in name order.
    const { error } = await new Migrator({
      db: handle.db,
      provider: { getMigrations: async () => everyMigration },
    }).migrateToLatest();
    expect(error).toBeUndefined();
    // An application's own migration in the same table: it must stay where it is.
    await sql`INSERT INTO kysely_migration (name, timestamp) VALUES ('2026_01_orders', '2026-01-01T00:00:00.000Z')`.execute(
      handle.db,
    );
    before = await names(handle, "kysely_migration");
  });
  afterAll(async () => {
    await Promise.all(handles.map((handle) => handle.close(5_000)));
  });

  it("counts as current before anything moved: the start-up check reads kysely_migration too", async () => {
    const handle = open();
    expect(before.map((row) => row.name)).toEqual([...Object.keys(everyMigration), "2026_01_orders"].sort());
    expect(await pendingMigrations(handle.db)).toEqual([]);
    expect(await pendingMigrationsIn(handle.db, photoMigrations)).toEqual([]);
  });

  it("moves each set's rows to its own table once, with several processes at once, and runs nothing again", async () => {
    const processes = [open(), open(), open(), open()];
    const results = await Promise.all([
      ...processes.slice(0, 2).map((handle) => migrateToLatest(handle.db)),
      ...processes.slice(2).map((handle) => migrateSetToLatest(handle.db, photoMigrations)),
    ]);
    expect(results).toEqual([[], [], [], []]);

    const handle = open();
    const timestampOf = new Map(before.map((row) => [row.name, row.timestamp]));
    const kept = (set: readonly string[]) => set.map((name) => ({ name, timestamp: timestampOf.get(name) }));
    expect(await names(handle, "outbox_migration")).toEqual(kept(Object.keys(migrations)));
    expect(await names(handle, "photo_migration")).toEqual(kept(Object.keys(photoMigrations.migrations)));
    expect(await names(handle, "kysely_migration")).toEqual(kept(["2026_01_orders"]));

    // Again: nothing left to move, nothing to run.
    expect(await migrateToLatest(handle.db)).toEqual([]);
    expect(await migrateSetToLatest(handle.db, photoMigrations)).toEqual([]);
    expect(await names(handle, "outbox_migration")).toHaveLength(Object.keys(migrations).length);
    expect(await pendingMigrations(handle.db)).toEqual([]);
    expect(await pendingMigrationsIn(handle.db, photoMigrations)).toEqual([]);
  });
});
