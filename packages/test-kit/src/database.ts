import { randomBytes } from "node:crypto";
import { migrateToLatest } from "@outbox/client";
import { createDatabaseOn } from "@outbox/devstack";
import {
  createDatabase,
  type DatabaseHandle,
  type DatabaseSettings,
  migrateExampleTables,
} from "@outbox/shared";
import { inject } from "vitest";

/** Creates a fresh database on the run's Postgres server and returns its URL. */
export async function createTestDatabase(label: string): Promise<string> {
  const adminUrl = inject("postgresAdminUrl");
  const name = `t_${label.replace(/[^a-z0-9]/gi, "_").toLowerCase()}_${randomBytes(4).toString("hex")}`;
  return createDatabaseOn(adminUrl, name);
}

/**
 * A fresh database of its own, migrated to the latest schema and the demo's (`example_effects`, which
 * the example and test handlers write), with a pool on it (5 s statement timeout): close the handle
 * in afterAll.
 */
export async function createMigratedTestDatabase(
  label: string,
  pool: Pick<DatabaseSettings, "service" | "poolMax">,
): Promise<{ url: string; handle: DatabaseHandle }> {
  const url = await createTestDatabase(label);
  const handle = createDatabase({
    url,
    ...pool,
    statementTimeoutMs: 5_000,
    idleInTransactionTimeoutMs: 10_000,
  });
  await migrateToLatest(handle.db);
  await migrateExampleTables(handle.db);
  return { url, handle };
}
