/**
 * The comparison for `pnpm bench --only api`: the photo service's POST /photos route on the same
 * Fastify settings and the same pool, writing the photo and its gear link in one transaction —
 * without the outbox event. What ours costs more is the outbox's cost. On SIGTERM it exits at once,
 * the way a server without a graceful stop goes (the source document's "before").
 */
import { createDatabase, Deadline, deadlineTransaction, uuidv7 } from "@outbox/shared";
import Fastify from "fastify";

const database = createDatabase({
  url: process.env.DATABASE_URL ?? "",
  service: "bench-peer",
  poolMax: 25,
  statementTimeoutMs: 5_000,
  idleInTransactionTimeoutMs: 10_000,
});
const app = Fastify({
  http: { headersTimeout: 5_000 },
  requestTimeout: 30_000,
  keepAliveTimeout: 65_000,
  handlerTimeout: 25_000,
});
app.post<{ Body: { title: string; gearIds: string[] } }>("/photos", async (request, reply) => {
  const id = uuidv7();
  const deadline = Deadline.after(25_000);
  try {
    await deadlineTransaction(database.db, deadline, async (trx) => {
      await trx.insertInto("photos").values({ id, title: request.body.title }).execute();
      await trx
        .insertInto("photo_gear_links")
        .values({ photo_id: id, gear_ids: JSON.stringify(request.body.gearIds), state: "linked" })
        .execute();
    });
  } finally {
    deadline.dispose();
  }
  return reply.code(201).send({ id, gearLink: "linked" });
});
process.on("SIGTERM", () => process.exit(0));
await app.listen({ host: "127.0.0.1", port: 0 });
const address = app.server.address();
process.stdout.write(
  `${JSON.stringify({ msg: "listening", port: typeof address === "object" && address ? address.port : 0 })}\n`,
);
