import { type Kysely, type QueryCreator, sql } from "kysely";
import type { Database } from "./db/schema.js";

/**
 * The equipment service confirmed the link. Only a pending link changes, so a repeat is harmless.
 * With `answer`, the same statement records the body a keyed POST answers (see post-photo.ts).
 */
export async function markLinked(
  db: Kysely<Database>,
  photoId: string,
  answer?: { id: string; gearLink: "linked" },
): Promise<void> {
  // The answer's CTE names no table of its own, so both forms update the same table.
  const recorded = (
    answer
      ? db.with("answer", (cte) =>
          cte
            .updateTable("photos")
            .set({ idempotency_response: JSON.stringify(answer) })
            .where("id", "=", photoId),
        )
      : db
  ) as QueryCreator<Database>;
  await recorded
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
