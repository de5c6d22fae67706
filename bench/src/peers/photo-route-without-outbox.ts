/**
 * The comparison for `pnpm bench --only api`: our photo server itself (the same Fastify settings,
 * hooks, deadline, validation, metrics and logger) whose POST /photos writes the photo and its gear
 * link in one statement on the same kind of deadline transaction — without the outbox event. What
 * ours costs more is the outbox's cost. On SIGTERM it exits at once, the way a server without a
 * graceful stop goes (the source document's "before").
 */
import { createApiMetrics, createPhotoServer, type PostPhoto } from "@outbox/api";
import { createDatabase, createLogger, deadlineTransaction, EXIT_OK, uuidv7 } from "@outbox/shared";
import { Registry } from "prom-client";

const database = createDatabase({
  url: process.env.DATABASE_URL ?? "",
  service: "bench-peer",
  poolMax: 25,
  statementTimeoutMs: 5_000,
  idleInTransactionTimeoutMs: 10_000,
});
const { db } = database;

/** Ours minus `enqueueWith`: the same two business rows, one statement, no event. */
const postPhotoWithoutEvent: PostPhoto = async (photo, deadline) => {
  const id = uuidv7();
  await deadlineTransaction(db, deadline, (trx) =>
    trx
      .with("photo", (cte) => cte.insertInto("photos").values({ id, title: photo.title }))
      .insertInto("photo_gear_links")
      .values({ photo_id: id, gear_ids: JSON.stringify(photo.gearIds), state: "linked" })
      .execute(),
  );
  return { id, gearLink: "linked" };
};

const server = createPhotoServer({
  db,
  postPhoto: postPhotoWithoutEvent,
  metrics: createApiMetrics(new Registry(), db),
  log: createLogger({ service: "bench-peer", version: "0", level: "info" }),
  headersTimeoutMs: 5_000,
  handlerTimeoutMs: 25_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
});
process.on("SIGTERM", () => process.exit(EXIT_OK));
const port = await server.listen("127.0.0.1", 0);
process.stdout.write(`${JSON.stringify({ msg: "listening", port })}\n`);
