import { type Deadline, enqueueWith, uuidv7 } from "@outbox/client";
import { isUniqueViolation, sleep } from "@outbox/shared";
import { type PostgresPool, sql } from "kysely";
import { z } from "zod";
import { deadlineConnection, deadlineTransaction } from "./db/connections.js";
import { insertPostedPhoto } from "./db/insert-posted-photo.js";
import type { EquipmentClient } from "./equipment-client.js";
import { ApiError } from "./errors.js";
import { markLinked } from "./gear-link-state.js";
import { storableText } from "./text-rules.js";

export const newPhoto = z.object({
  title: storableText("title").trim().min(1).max(200),
  gearIds: z.array(storableText("each gear id").min(1).max(100)).max(20).default([]),
});

export type NewPhoto = z.infer<typeof newPhoto>;

export interface PostedPhoto {
  readonly id: string;
  readonly gearLink: "linked" | "pending";
  /** A repeat of an earlier request with the same Idempotency-Key: nothing was written. */
  readonly replayed?: boolean;
}

/** `postPhoto` with its dependencies bound: what the HTTP route calls. */
export type PostPhoto = (
  photo: NewPhoto,
  deadline: Deadline,
  idempotencyKey?: string,
) => Promise<PostedPhoto>;

export interface PostPhotoDependencies {
  /** The pg pool (DatabaseHandle.pool): each step holds a client of its own, bounded by the deadline. */
  readonly pool: PostgresPool;
  readonly equipment: EquipmentClient;
  /** The equipment client's own limit: the request's link attempt owns the pending row that long. */
  readonly equipmentTimeoutMs: number;
  /** API_HANDLER_TIMEOUT_MS: no request runs longer, so a keyed photo this old without an answer lost it. */
  readonly handlerTimeoutMs: number;
  readonly topic: string;
  /**
   * Tests and drills only (never a setting): hold the transaction open this long before the commit,
   * so that a stop finds requests in flight. Default 0.
   */
  readonly commitDelayMs?: number;
}

/** Postgres refusing a second photo under one Idempotency-Key (the constraint of migration 0011). */
const IDEMPOTENCY_KEY_CONSTRAINT = "photos_idempotency_key";

/**
 * Writes the photo, its pending gear link and `photo.posted` in one transaction; then, with the
 * transaction committed, asks the equipment service to link the gear. A link that fails or runs out
 * of time stays pending for the reconciliation job: the photo is posted either way.
 *
 * Under an `idempotencyKey` the key is stored with the photo (unique), and so is the body answered;
 * a repeat of the key writes nothing and gets that body again (see {@link answerRepeat}).
 */
export async function postPhoto(
  dependencies: PostPhotoDependencies,
  photo: NewPhoto,
  deadline: Deadline,
  idempotencyKey?: string,
): Promise<PostedPhoto> {
  const { pool, equipment } = dependencies;
  const id = uuidv7();
  // Without gear there is nothing to confirm: the link is born linked and reconciliation never sees it.
  const pending = photo.gearIds.length > 0;
  try {
    await deadlineTransaction(pool, deadline, async (trx) => {
      const event = {
        topic: dependencies.topic,
        eventType: "photo.posted",
        orderingKey: id,
        payload: { photoId: id, title: photo.title, gearIds: photo.gearIds },
      };
      await enqueueWith([event], (rows) =>
        insertPostedPhoto(
          trx,
          {
            id,
            title: photo.title,
            idempotency_key: idempotencyKey ?? null,
            // Known already when there is no gear to link.
            idempotency_response:
              idempotencyKey !== undefined && !pending ? JSON.stringify({ id, gearLink: "linked" }) : null,
          },
          // This request tries first; reconciliation takes over only once that attempt is over.
          {
            gearIdsJson: JSON.stringify(photo.gearIds),
            state: pending ? "pending" : "linked",
            firstAttemptInMs: pending ? dependencies.equipmentTimeoutMs : 0,
          },
          rows,
        ),
      );
      const { commitDelayMs = 0 } = dependencies;
      if (commitDelayMs > 0) await sleep(commitDelayMs, deadline.signal);
    });
  } catch (error) {
    // The key's first request committed (a repeat arriving while it was still open waited for it).
    if (idempotencyKey !== undefined && isUniqueViolation(error, IDEMPOTENCY_KEY_CONSTRAINT))
      return answerRepeat(dependencies, photo, idempotencyKey, deadline);
    throw error;
  }
  if (!pending) return { id, gearLink: "linked" };
  const outcome = await equipment.link({ photoId: id, gearIds: photo.gearIds }, deadline);
  if (!outcome.linked) {
    if (idempotencyKey !== undefined) await recordAnswer(pool, deadline, { id, gearLink: "pending" });
    return { id, gearLink: "pending" };
  }
  // The link exists at the equipment service even if this update does not make it (no time left):
  // reconciliation sends it again under the same idempotency key and records it then.
  const answer = { id, gearLink: "linked" } as const;
  try {
    await deadlineConnection(pool, deadline, (db) =>
      markLinked(db, id, idempotencyKey !== undefined ? answer : undefined),
    );
    return answer;
  } catch {
    return { id, gearLink: "pending" };
  }
}

/**
 * The answer of a keyed request whose link stays pending. Best effort: when it does not make it, a
 * repeat answers from the link's state instead (see {@link answerRepeat}).
 */
async function recordAnswer(pool: PostgresPool, deadline: Deadline, answer: PostedPhoto): Promise<void> {
  await deadlineConnection(pool, deadline, (db) =>
    db
      .updateTable("photos")
      .set({ idempotency_response: JSON.stringify(answer) })
      .where("id", "=", answer.id)
      .execute(),
  ).catch(() => undefined);
}

/**
 * A repeat of an Idempotency-Key whose photo exists: the first request's body again, written
 * nothing. Refused with 422 when its body differs from the first one's (same title, same gear ids),
 * and with 409 while the first request may still be answering (it links the gear after its commit).
 * A photo older than any request can run without a recorded answer lost it (its request was cut):
 * the answer is then read from the link's state.
 */
async function answerRepeat(
  dependencies: PostPhotoDependencies,
  photo: NewPhoto,
  key: string,
  deadline: Deadline,
): Promise<PostedPhoto> {
  const first = await deadlineConnection(dependencies.pool, deadline, (db) =>
    db
      .selectFrom("photos")
      .innerJoin("photo_gear_links", "photo_gear_links.photo_id", "photos.id")
      .select([
        "photos.id",
        "photos.title",
        "photos.idempotency_response",
        "photo_gear_links.gear_ids",
        "photo_gear_links.state",
        sql<boolean>`photos.created_at > now() - ${dependencies.handlerTimeoutMs} * interval '1 millisecond'`.as(
          "mayBeAnswering",
        ),
      ])
      .where("photos.idempotency_key", "=", key)
      .executeTakeFirstOrThrow(),
  );
  const sameBody =
    first.title === photo.title &&
    first.gear_ids.length === photo.gearIds.length &&
    first.gear_ids.every((gearId, index) => gearId === photo.gearIds[index]);
  if (!sameBody)
    throw new ApiError(
      422,
      "Idempotency-Key was already used with a different body (title or gearIds differ): use a new key for a new photo",
    );
  if (first.idempotency_response) return { ...first.idempotency_response, replayed: true };
  if (first.mayBeAnswering)
    throw new ApiError(
      409,
      "a request with this Idempotency-Key is still being answered: repeat it once that request has its answer",
    );
  return { id: first.id, gearLink: first.state, replayed: true };
}
