import { performance } from "node:perf_hooks";
import { photoDatabase } from "@outbox/api";
import { REQUEST_TIMEOUT_HEADER } from "@outbox/client";
import { sql } from "kysely";
import type { HttpOutcome } from "./checks.js";
import type { DrillEnvironment } from "./drill-environment.js";

export interface PostOutcome {
  readonly outcome: HttpOutcome;
  readonly id: string | null;
  readonly gearLink: string | null;
  /** From sending the request to the end of its answer (or the failure). */
  readonly elapsedMs: number;
  /** `performance.now()` when the request was sent. */
  readonly sentAt: number;
}

/** Posts one photo as a client would; a failed connection is the outcome "cut", not an exception. */
export async function postPhotoRequest(
  port: number,
  title: string,
  options: { readonly gearIds?: readonly string[]; readonly timeoutHeaderMs?: number } = {},
): Promise<PostOutcome> {
  const sentAt = performance.now();
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.timeoutHeaderMs !== undefined)
    headers[REQUEST_TIMEOUT_HEADER] = String(options.timeoutHeaderMs);
  try {
    const response = await fetch(`http://127.0.0.1:${port}/photos`, {
      method: "POST",
      headers,
      body: JSON.stringify({ title, gearIds: options.gearIds ?? ["lens-35mm"] }),
    });
    const body = (await response.json()) as { id?: string; gearLink?: string };
    return {
      outcome: response.status,
      id: body.id ?? null,
      gearLink: body.gearLink ?? null,
      elapsedMs: performance.now() - sentAt,
      sentAt,
    };
  } catch {
    return { outcome: "cut", id: null, gearLink: null, elapsedMs: performance.now() - sentAt, sentAt };
  }
}

/** The gear link state of a photo as GET /photos/:id reports it. */
export async function gearLinkOf(port: number, id: string): Promise<string | null> {
  const response = await fetch(`http://127.0.0.1:${port}/photos/${id}`);
  if (!response.ok) return null;
  return ((await response.json()) as { gearLink?: string }).gearLink ?? null;
}

/** Photos whose title starts with `prefix`, and their photo.posted events, as committed. */
export async function countCommittedPhotos(
  environment: DrillEnvironment,
  prefix: string,
): Promise<{ photos: number; events: number }> {
  const db = photoDatabase(environment.database.db);
  const photos = await db
    .selectFrom("photos")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("title", "like", `${prefix}%`)
    .executeTakeFirstOrThrow();
  const events = await db
    .selectFrom("outbox")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("event_type", "=", "photo.posted")
    .where(sql<string>`payload->>'title'`, "like", `${prefix}%`)
    .executeTakeFirstOrThrow();
  return { photos: Number(photos.n), events: Number(events.n) };
}
