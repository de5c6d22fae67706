import type { Deadline } from "@outbox/client";
import {
  type DatabaseHandle,
  deadlineConnection as sharedConnection,
  deadlineTransaction as sharedTransaction,
} from "@outbox/shared";
import type { Kysely, PostgresPool } from "kysely";
import type { Database, PhotoTables } from "./schema.js";

/** The shared runtime's pool handle knows the outbox's tables; the service sees its own too. */
export function photoDatabase(db: DatabaseHandle["db"]): Kysely<Database> {
  return db.withTables<PhotoTables>();
}

/** `deadlineConnection` (@outbox/shared) on the service's schema. */
export function deadlineConnection<T>(
  pool: PostgresPool,
  deadline: Deadline,
  work: (db: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return sharedConnection<T, Database>(pool, deadline, work);
}

/** `deadlineTransaction` (@outbox/shared) on the service's schema. */
export function deadlineTransaction<T>(
  pool: PostgresPool,
  deadline: Deadline,
  work: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  return sharedTransaction<T, Database>(pool, deadline, work);
}
