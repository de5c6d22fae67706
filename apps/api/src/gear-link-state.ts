import type { Database } from "@outbox/shared";
import { type Kysely, sql } from "kysely";

/** The equipment service confirmed the link. Only a pending link changes, so a repeat is harmless. */
export async function markLinked(db: Kysely<Database>, photoId: string): Promise<void> {
  await db
    .updateTable("photo_gear_links")
    .set({ state: "linked", linked_at: sql<Date>`now()`, last_error: null })
    .where("photo_id", "=", photoId)
    .where("state", "=", "pending")
    .execute();
}

/** A retry failed: count it and wait `retryInMs` before the next one. */
export async function markRetryLater(
  db: Kysely<Database>,
  photoId: string,
  reason: string,
  retryInMs: number,
): Promise<void> {
  await db
    .updateTable("photo_gear_links")
    .set((eb) => ({
      attempts: eb("attempts", "+", 1),
      next_attempt_at: sql<Date>`now() + ${retryInMs} * interval '1 millisecond'`,
      last_error: reason,
    }))
    .where("photo_id", "=", photoId)
    .where("state", "=", "pending")
    .execute();
}
