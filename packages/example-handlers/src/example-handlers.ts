import {
  type ConsumedEvent,
  type OutboxTables as Database,
  defineHandlers,
  type ParsingHandler,
} from "@outbox/client";
import type { ColumnType } from "kysely";
import { z } from "zod";

/**
 * The example handler's effect: one row per event. Not in the outbox's schema (`Database`): the
 * demo's own migrations create it (`pnpm migrate --demo`, `migrateExampleTables`).
 */
export interface ExampleEffectsTable {
  event_id: string;
  event_type: string;
  payload: ColumnType<unknown, string, string>;
  applied_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/**
 * The effect of `photo.posted`: one row of the photo feed per event. The photo service's first
 * migration creates it (apps/api/src/db/migrations/0005_photo_service.ts).
 */
export interface PhotoFeedTable {
  event_id: string;
  photo_id: string;
  title: string;
  added_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** The schema these handlers write: the outbox's and the demo's tables. */
export type ExampleDatabase = Database & { example_effects: ExampleEffectsTable; photo_feed: PhotoFeedTable };

/**
 * The demo's handlers: the consumer daemon runs them when CONSUMER_HANDLERS_MODULE names this file
 * (the drills, `pnpm stack`, the benches and the tests do; the daemon has no default). Copy it: a
 * module whose default export is `defineHandlers(...)` is all the daemon needs.
 */
const exampleCreated = z.object({ name: z.string().min(1) });
const photoPosted = z.object({ photoId: z.uuid(), title: z.string() });

export interface ExampleEvents {
  "example.created": z.infer<typeof exampleCreated>;
  "photo.posted": z.infer<typeof photoPosted>;
}

/** The example effect's row for an event (a batch handler inserts one per event, in one statement). */
export function exampleEffectRow(event: ConsumedEvent): {
  event_id: string;
  event_type: string;
  payload: string;
} {
  return { event_id: event.id, event_type: event.type, payload: JSON.stringify(event.payload) };
}

/** The photo service's event (apps/api) ends the chain in an effect: one row of the photo feed. */
export const photoPostedHandler: ParsingHandler<
  "photo.posted",
  ExampleEvents["photo.posted"],
  ExampleDatabase
> = {
  parse: (payload) => photoPosted.parse(payload),
  async handle(event, { trx }) {
    await trx
      .insertInto("photo_feed")
      .values({ event_id: event.id, photo_id: event.payload.photoId, title: event.payload.title })
      .execute();
  },
};

export default defineHandlers<ExampleEvents, ExampleDatabase>({
  "example.created": {
    // A payload that breaks the contract is poison: retrying would not make it valid.
    parse: (payload) => exampleCreated.parse(payload),
    async handle(event, { trx }) {
      // The effect: one row, written through the inbox transaction, so it commits exactly once.
      await trx.insertInto("example_effects").values(exampleEffectRow(event)).execute();
    },
  },
  "photo.posted": photoPostedHandler,
});
