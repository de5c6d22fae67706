import { migrateSetToLatest } from "@outbox/client";
import {
  createDatabase as createOutboxDatabase,
  type DatabaseHandle as OutboxDatabaseHandle,
} from "@outbox/shared";
import { createMigratedTestDatabase as createOutboxTestDatabase } from "@outbox/test-kit";
import type { Kysely } from "kysely";
import { photoDatabase } from "../src/db/connections.js";
import { photoMigrations } from "../src/db/migrations/index.js";
import type { Database } from "../src/db/schema.js";

/** A test database's handle that sees the photo service's tables. */
export type DatabaseHandle = Omit<OutboxDatabaseHandle, "db"> & { readonly db: Kysely<Database> };

function seesPhotoTables(handle: OutboxDatabaseHandle): DatabaseHandle {
  return { ...handle, db: photoDatabase(handle.db) };
}

/** `createDatabase` (@outbox/shared), its handle seeing the photo service's tables. */
export function createDatabase(settings: Parameters<typeof createOutboxDatabase>[0]): DatabaseHandle {
  return seesPhotoTables(createOutboxDatabase(settings));
}

/** test-kit's migrated test database, with the photo service's own migrations applied on top. */
export async function createMigratedTestDatabase(
  label: string,
  pool: Parameters<typeof createOutboxTestDatabase>[1],
): Promise<{ url: string; handle: DatabaseHandle }> {
  const { url, handle } = await createOutboxTestDatabase(label, pool);
  await migrateSetToLatest(handle.db, photoMigrations);
  return { url, handle: seesPhotoTables(handle) };
}
