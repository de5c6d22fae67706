import type { MigrationSet } from "@outbox/client";
import * as photoService from "./0005_photo_service.js";
import * as photoIdempotencyKey from "./0011_photo_idempotency_key.js";

/**
 * The photo service's tables, a migration set of its own beside the outbox's (`migrateToLatest`).
 * The names are the ones they had when they were in the outbox's list (hence the gaps): a database
 * that applied them there finds them applied here (`migrateSetToLatest` moves their rows over).
 * Listed statically so a bundled or deployed build carries them; applied migrations are never edited.
 */
export const photoMigrations: MigrationSet = {
  label: "api migration",
  migrations: {
    "0005_photo_service": photoService,
    "0011_photo_idempotency_key": photoIdempotencyKey,
  },
  migrationTableName: "photo_migration",
  migrationLockTableName: "photo_migration_lock",
};
