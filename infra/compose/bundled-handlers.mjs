// A handlers module with a dependency of its own (zod), as a team ships it in our consumer image:
// bundled with its dependencies into one file (docs/deployment.md, "Your handlers in our image"),
// @outbox/client included, since the image's node_modules has no zod. The bundle's copy of the client
// is not the consumer's: its PoisonMessageError is known by its brand, its Deadline by its methods.
// infra's packaged-daemons test bundles it with esbuild and runs it in the packaged consumer.
import { Deadline, defineHandlers, PoisonMessageError } from "@outbox/client";
import { z } from "zod";

const Example = z.object({ name: z.string().min(1) });

export default defineHandlers({
  "example.bundled": {
    parse: (payload) => Example.parse(payload),
    handle: async (event, { trx, deadline }) => {
      if (event.payload.name === "poison") throw new PoisonMessageError("the example refuses this name");
      // A step of its own within the message's deadline (made by the consumer's copy of the client).
      const step = Deadline.after(5_000, deadline);
      try {
        await trx
          .insertInto("example_effects")
          .values({ event_id: event.id, event_type: event.type, payload: JSON.stringify(event.payload) })
          .execute();
      } finally {
        step.dispose();
      }
    },
  },
});
