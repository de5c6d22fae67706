/**
 * The comparison for `pnpm bench --only api`: our photo service itself — the same daemon scaffolding
 * (`runDaemon`: pool, plan mode, logger, process metrics, ops server) and the same Fastify server on
 * the same settings (`listenPhotoServer`: hooks, deadline, validation, metrics) — whose POST /photos
 * writes the photo and its gear link in one statement on the same kind of deadline transaction,
 * without the outbox event. What ours costs more is the outbox's cost, and nothing else. On SIGTERM
 * it exits at once, the way a server without a graceful stop goes (the source document's "before").
 */
import {
  API_PLAN_CACHE_MODE,
  apiSettings,
  apiTimeouts,
  createApiMetrics,
  deadlineTransaction,
  listenPhotoServer,
  type PostPhoto,
  photoDatabase,
} from "@outbox/api";
import { uuidv7 } from "@outbox/client";
import { EXIT_OK, runDaemon } from "@outbox/shared";
import { CompiledQuery } from "kysely";

/**
 * Ours's statement (apps/api/src/db/insert-posted-photo.ts) without its outbox part, written out
 * once the same way, so that how the statement is built costs both sides alike.
 */
const INSERT_PHOTO_AND_LINK = `WITH photo AS (
    INSERT INTO photos (id, title) VALUES ($1, $2)
  )
  INSERT INTO photo_gear_links (photo_id, gear_ids, state) VALUES ($1, $3, $4)`;

// Registered before runDaemon's own stop listener, so it runs first: no drain.
process.on("SIGTERM", () => process.exit(EXIT_OK));

await runDaemon({
  service: "bench-peer",
  version: "0",
  settings: apiSettings,
  timeouts: apiTimeouts,
  planCacheMode: API_PLAN_CACHE_MODE,
  async start(context) {
    const { db } = context.database;
    /** Ours minus `enqueueWith`: the same two business rows, one statement, no event. */
    const postPhotoWithoutEvent: PostPhoto = async (photo, deadline) => {
      const id = uuidv7();
      await deadlineTransaction(context.database.pool, deadline, (trx) =>
        trx.executeQuery(
          CompiledQuery.raw(INSERT_PHOTO_AND_LINK, [
            id,
            photo.title,
            JSON.stringify(photo.gearIds),
            "linked",
          ]),
        ),
      );
      return { id, gearLink: "linked" };
    };
    const server = await listenPhotoServer(
      context,
      createApiMetrics(context.metrics, photoDatabase(db)),
      postPhotoWithoutEvent,
    );
    return {
      failure: new Promise<never>(() => {}),
      inFlight: () => ({ requests: server.inFlight() }),
      drain: (drainDeadline) => server.stop(drainDeadline),
    };
  },
});
