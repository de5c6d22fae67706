import type { Kysely } from "kysely";
import type { Database, GearLinkState } from "./db/schema.js";

export interface PhotoView {
  readonly id: string;
  readonly title: string;
  readonly createdAt: string;
  readonly gearIds: readonly string[];
  readonly gearLink: GearLinkState;
  readonly linkAttempts: number;
}

/** The photo and the state of its gear link, or null when there is no such photo. */
export async function getPhoto(db: Kysely<Database>, id: string): Promise<PhotoView | null> {
  const row = await db
    .selectFrom("photos")
    .innerJoin("photo_gear_links", "photo_gear_links.photo_id", "photos.id")
    .select([
      "photos.id",
      "photos.title",
      "photos.created_at",
      "photo_gear_links.gear_ids",
      "photo_gear_links.state",
      "photo_gear_links.attempts",
    ])
    .where("photos.id", "=", id)
    .executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    title: row.title,
    createdAt: row.created_at.toISOString(),
    gearIds: row.gear_ids,
    gearLink: row.state,
    linkAttempts: row.attempts,
  };
}
