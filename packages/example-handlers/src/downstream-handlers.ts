import { defineHandlers } from "@outbox/client";
import {
  type ExampleDatabase,
  type ExampleEvents,
  exampleEffectRow,
  photoPostedHandler,
} from "./example-handlers.js";

/**
 * The example effect, after a call to a downstream service the effect depends on (a payment API,
 * say) at DRILL_DOWNSTREAM_URL: while it answers anything but 2xx, or not at all, the handler throws
 * and the message is retried. The failover drill takes that service down to trip the kill switch.
 */
const downstreamUrl = process.env.DRILL_DOWNSTREAM_URL ?? "";
if (downstreamUrl === "") throw new Error("DRILL_DOWNSTREAM_URL is required by the downstream handlers");

export default defineHandlers<ExampleEvents, ExampleDatabase>({
  "example.created": async (event, { trx, deadline }) => {
    const answer = await fetch(downstreamUrl, { method: "POST", signal: deadline.signal });
    await answer.body?.cancel();
    if (!answer.ok) throw new Error(`downstream answered ${answer.status}`);
    await trx.insertInto("example_effects").values(exampleEffectRow(event)).execute();
  },
  "photo.posted": photoPostedHandler,
});
