import { defineHandlers } from "@outbox/client";
import { sleep } from "@outbox/shared";
import {
  type ExampleDatabase,
  type ExampleEvents,
  exampleEffectRow,
  photoPostedHandler,
} from "./example-handlers.js";

/**
 * The example effect (one row in `example_effects`) after DRILL_HANDLER_MS of "work", so a stop
 * lands while messages are inside the handler — what the consumer-sigterm drill needs to watch.
 * Loaded by the consumer daemon through CONSUMER_HANDLERS_MODULE, like any user's handlers.
 */
const workMs = Number(process.env.DRILL_HANDLER_MS ?? "200");

export default defineHandlers<ExampleEvents, ExampleDatabase>({
  "example.created": async (event, { trx, deadline }) => {
    await sleep(workMs, deadline.signal);
    deadline.throwIfExpired();
    await trx.insertInto("example_effects").values(exampleEffectRow(event)).execute();
  },
  // The photo chain drill measures delivery, not a stop inside the handler: no extra work.
  "photo.posted": photoPostedHandler,
});
