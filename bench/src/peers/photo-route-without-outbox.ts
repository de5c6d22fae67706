/**
 * The comparison for `pnpm bench --only api`: our photo server itself (the same Fastify settings,
 * hooks, deadline, validation, metrics and logger) whose POST /photos writes the photo and its gear
 * link in one statement on the same kind of deadline transaction — without the outbox event. What
 * ours costs more is the outbox's cost. On SIGTERM it exits at once, the way a server without a
 * graceful stop goes (the source document's "before").
 */
import {
  API_PLAN_CACHE_MODE,
  apiSettings,
  createApiMetrics,
  createPhotoServer,
  type PostPhoto,
} from "@outbox/api";
import {
  createDatabase,
  createLogger,
  deadlineTransaction,
  EXIT_OK,
  loadConfig,
  uuidv7,
} from "@outbox/shared";
import { Registry } from "prom-client";

// The daemon's own settings from the same environment: pool and timeouts cannot drift from ours.
const config = loadConfig(apiSettings, process.env);
const database = createDatabase({
  url: config.databaseUrl,
  service: "bench-peer",
  poolMax: config.dbPoolMax,
  statementTimeoutMs: config.dbStatementTimeoutMs,
  idleInTransactionTimeoutMs: config.dbIdleInTransactionTimeoutMs,
  preparedStatements: config.dbPreparedStatements,
  planCacheMode: API_PLAN_CACHE_MODE,
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
  log: createLogger({ service: "bench-peer", version: "0", level: config.logLevel }),
  headersTimeoutMs: config.headersTimeoutMs,
  handlerTimeoutMs: config.handlerTimeoutMs,
  requestTimeoutMs: config.requestTimeoutMs,
  keepAliveTimeoutMs: config.keepAliveTimeoutMs,
});
process.on("SIGTERM", () => process.exit(EXIT_OK));
const port = await server.listen(config.host, config.port);
process.stdout.write(`${JSON.stringify({ msg: "listening", port })}\n`);
