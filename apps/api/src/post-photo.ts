import {
  type Database,
  type Deadline,
  deadlineTransaction,
  enqueueWith,
  sleep,
  uuidv7,
} from "@outbox/shared";
import type { Kysely } from "kysely";
import { z } from "zod";
import type { EquipmentClient } from "./equipment-client.js";
import { markLinked } from "./gear-link-state.js";

export const newPhoto = z.object({
  title: z.string().trim().min(1).max(200),
  gearIds: z.array(z.string().min(1).max(100)).max(20).default([]),
});

export type NewPhoto = z.infer<typeof newPhoto>;

export interface PostedPhoto {
  readonly id: string;
  readonly gearLink: "linked" | "pending";
}

/** `postPhoto` with its dependencies bound: what the HTTP route calls. */
export type PostPhoto = (photo: NewPhoto, deadline: Deadline) => Promise<PostedPhoto>;

export interface PostPhotoDependencies {
  readonly db: Kysely<Database>;
  readonly equipment: EquipmentClient;
  /** The equipment client's own limit: the request's link attempt owns the pending row that long. */
  readonly equipmentTimeoutMs: number;
  readonly topic: string;
  /** Drills only: hold the transaction open this long before the commit. */
  readonly commitDelayMs: number;
}

/**
 * Writes the photo, its pending gear link and `photo.posted` in one transaction; then, with the
 * transaction committed, asks the equipment service to link the gear. A link that fails or runs out
 * of time stays pending for the reconciliation job: the photo is posted either way.
 */
export async function postPhoto(
  dependencies: PostPhotoDependencies,
  photo: NewPhoto,
  deadline: Deadline,
): Promise<PostedPhoto> {
  const { db, equipment } = dependencies;
  const id = uuidv7();
  // Without gear there is nothing to confirm: the link is born linked and reconciliation never sees it.
  const pending = photo.gearIds.length > 0;
  await deadlineTransaction(db, deadline, async (trx) => {
    const event = {
      topic: dependencies.topic,
      eventType: "photo.posted",
      orderingKey: id,
      payload: { photoId: id, title: photo.title, gearIds: photo.gearIds },
    };
    // The three rows in one statement (data-modifying CTEs), so one round trip: the request's cost
    // is mostly round trips, and the outbox row should not add one of its own. The link's foreign
    // key is checked at the end of the statement, when the photo row is there.
    await enqueueWith([event], (rows) =>
      trx
        .with("photo", (db) => db.insertInto("photos").values({ id, title: photo.title }))
        .with("link", (db) =>
          db.insertInto("photo_gear_links").values({
            photo_id: id,
            gear_ids: JSON.stringify(photo.gearIds),
            state: pending ? "pending" : "linked",
            // This request tries first; reconciliation takes over only once that attempt is over.
            ...(pending && { next_attempt_at: new Date(Date.now() + dependencies.equipmentTimeoutMs) }),
          }),
        )
        .insertInto("outbox")
        .values(rows)
        .execute(),
    );
    if (dependencies.commitDelayMs > 0) await sleep(dependencies.commitDelayMs, deadline.signal);
  });
  if (!pending) return { id, gearLink: "linked" };
  const outcome = await equipment.link({ photoId: id, gearIds: photo.gearIds }, deadline);
  if (!outcome.linked) return { id, gearLink: "pending" };
  // The link exists at the equipment service even if this update does not make it (no time left):
  // reconciliation sends it again under the same idempotency key and records it then.
  await markLinked(db, id);
  return { id, gearLink: "linked" };
}
