import { z } from "zod";
import { defineHandlers } from "./handlers.js";

/**
 * The handlers the daemon runs unless CONSUMER_HANDLERS_MODULE names your own module. Copy this
 * file: a module whose default export is `defineHandlers(...)` is all the daemon needs.
 */
const exampleCreated = z.object({ name: z.string().min(1) });

export interface ExampleEvents {
  "example.created": z.infer<typeof exampleCreated>;
}

export default defineHandlers<ExampleEvents>({
  "example.created": {
    // A payload that breaks the contract is poison: retrying would not make it valid.
    parse: (payload) => exampleCreated.parse(payload),
    async handle(event, { trx }) {
      // The effect: one row, written through the inbox transaction, so it commits exactly once.
      await trx
        .insertInto("example_effects")
        .values({ event_id: event.id, event_type: event.type, payload: JSON.stringify(event.payload) })
        .execute();
    },
  },
});
