// A handlers module as a user ships it beside the packaged consumer (CONSUMER_HANDLERS_MODULE):
// plain JavaScript, since the image's node runs no TypeScript, importing the client the package
// carries. docker-compose.yml mounts it into the consumer; infra's packaged-daemons test runs it.
import { defineHandlers } from "@outbox/client";

export default defineHandlers({
  "example.created": async (event, { trx }) => {
    await trx
      .insertInto("example_effects")
      .values({ event_id: event.id, event_type: event.type, payload: JSON.stringify(event.payload) })
      .execute();
  },
});
