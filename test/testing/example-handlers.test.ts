import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { migrateApiTables, postPhoto } from "@outbox/api";
import { Deadline, type HandlerSet } from "@outbox/client";
import { enqueuedEvents, outboxMark } from "@outbox/client/testing";
import { runHandlers } from "@outbox/consumer/testing";
import exampleHandlers, {
  type ExampleDatabase,
  type ExampleEffectsTable,
  type ExampleEvents,
  type PhotoFeedTable,
} from "@outbox/example-handlers";
import { DOWNSTREAM_HANDLERS_MODULE } from "@outbox/example-handlers/modules";
import type { DatabaseHandle } from "@outbox/shared";
import { createMigratedTestDatabase } from "@outbox/test-kit";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Our own example handlers, tested with the test kit as an application tests its handlers: against
// its database, through the consumer's pipeline, with no queue and no AWS.

let database: DatabaseHandle;
let db: Kysely<ExampleDatabase>;

beforeAll(async () => {
  ({ handle: database } = await createMigratedTestDatabase("example_handlers", {
    service: "testing-test",
    poolMax: 6,
  }));
  await migrateApiTables(database.db);
  db = database.db.withTables<{ example_effects: ExampleEffectsTable; photo_feed: PhotoFeedTable }>();
});
afterAll(async () => {
  await database.close(5_000);
});

function effectsOf(eventId: string) {
  return db
    .selectFrom("example_effects")
    .select(["event_type", "payload"])
    .where("event_id", "=", eventId)
    .execute();
}

describe("the example handlers (packages/example-handlers/src/example-handlers.ts)", () => {
  it("write one example_effects row per example.created, however often it is delivered", async () => {
    const [first] = await runHandlers({
      handlers: exampleHandlers,
      pool: database.pool,
      events: [{ type: "example.created", payload: { name: "kettle" } }],
    });
    if (first === undefined) throw new Error("no run");
    const again = await runHandlers({
      handlers: exampleHandlers,
      pool: database.pool,
      events: [first.event, first.event],
    });

    expect(first.outcome).toBe("processed");
    expect(again.map((run) => run.outcome)).toEqual(["duplicate", "duplicate"]);
    expect(await effectsOf(first.event.id)).toEqual([
      { event_type: "example.created", payload: { name: "kettle" } },
    ]);
  });

  it("refuse a payload that breaks the contract as poison, writing nothing", async () => {
    const runs = await runHandlers({
      handlers: exampleHandlers,
      pool: database.pool,
      events: [
        { type: "example.created", payload: { name: "" } },
        { type: "photo.posted", payload: { photoId: "not-a-uuid", title: "t" } },
      ],
    });

    expect(runs.map((run) => (run.outcome === "poison" ? run.reason : run.outcome))).toEqual([
      "payload_rejected",
      "payload_rejected",
    ]);
    expect(await effectsOf(runs[0]?.event.id ?? "")).toEqual([]);
  });

  it("end the photo service's chain: what POST /photos enqueued adds one photo_feed row", async () => {
    const mark = await outboxMark(db);
    const deadline = Deadline.after(10_000);
    const posted = await postPhoto(
      {
        pool: database.pool,
        // A photo without gear links nothing: the equipment service is never called.
        equipment: {
          link: () => Promise.reject(new Error("the equipment service was called for a photo without gear")),
        },
        equipmentTimeoutMs: 1_000,
        handlerTimeoutMs: 10_000,
        topic: "photos",
      },
      { title: "Sunrise", gearIds: [] },
      deadline,
    ).finally(() => deadline.dispose());

    // "This transaction enqueued photo.posted for key <the photo's id>."
    const enqueued = await enqueuedEvents<ExampleEvents>(db, { after: mark });
    expect(enqueued).toEqual([
      expect.objectContaining({
        topic: "photos",
        type: "photo.posted",
        key: posted.id,
        payload: { photoId: posted.id, title: "Sunrise", gearIds: [] },
      }),
    ]);

    const runs = await runHandlers({ handlers: exampleHandlers, pool: database.pool, events: enqueued });

    expect(runs.map((run) => [run.outcome, run.event.id])).toEqual([["processed", enqueued[0]?.id]]);
    const feed = await db.selectFrom("photo_feed").select(["event_id", "photo_id", "title"]).execute();
    expect(feed).toEqual([{ event_id: enqueued[0]?.id, photo_id: posted.id, title: "Sunrise" }]);
  });
});

describe("the packaged daemon's example handlers module (infra/compose/example-handlers.mjs)", () => {
  it("writes one example_effects row per example.created, however often it is delivered", async () => {
    // Plain JavaScript, as a user ships it beside the packaged consumer: loaded as the daemon loads it.
    const modulePath = "../../infra/compose/example-handlers.mjs";
    const { default: handlers } = (await import(modulePath)) as { default: HandlerSet<ExampleDatabase> };

    const [first] = await runHandlers({
      handlers,
      pool: database.pool,
      events: [{ type: "example.created", payload: { name: "compose" } }],
    });
    if (first === undefined) throw new Error("no run");
    const again = await runHandlers({ handlers, pool: database.pool, events: [first.event] });

    expect([first.outcome, ...again.map((run) => run.outcome)]).toEqual(["processed", "duplicate"]);
    expect(await effectsOf(first.event.id)).toEqual([
      { event_type: "example.created", payload: { name: "compose" } },
    ]);
  });
});

describe("the downstream handlers (packages/example-handlers/src/downstream-handlers.ts)", () => {
  let downstream: Server;
  let status = 200;
  let calls = 0;
  let handlers: HandlerSet<ExampleDatabase>;

  beforeAll(async () => {
    downstream = createServer((request, response) => {
      calls += 1;
      request.resume();
      response.writeHead(status).end();
    });
    await new Promise<void>((resolve) => downstream.listen(0, "127.0.0.1", resolve));
    const { port } = downstream.address() as AddressInfo;
    // The module reads its URL when it is loaded, as the daemon loads it.
    process.env.DRILL_DOWNSTREAM_URL = `http://127.0.0.1:${port}/pay`;
    ({ default: handlers } = (await import(DOWNSTREAM_HANDLERS_MODULE)) as {
      default: HandlerSet<ExampleDatabase>;
    });
  });
  afterAll(async () => {
    delete process.env.DRILL_DOWNSTREAM_URL;
    await new Promise((resolve) => downstream.close(resolve));
  });

  it("fail while the downstream service answers 503, rolled back; the retry after it recovers writes once", async () => {
    status = 503;
    const [failed] = await runHandlers({
      handlers,
      pool: database.pool,
      events: [{ type: "example.created", payload: { name: "paid" } }],
    });
    if (failed === undefined) throw new Error("no run");

    expect(failed).toMatchObject({ outcome: "failed", error: new Error("downstream answered 503") });
    expect(await effectsOf(failed.event.id)).toEqual([]);

    status = 200;
    const retried = await runHandlers({ handlers, pool: database.pool, events: [failed.event] });
    const duplicate = await runHandlers({ handlers, pool: database.pool, events: [failed.event] });

    expect([...retried, ...duplicate].map((run) => run.outcome)).toEqual(["processed", "duplicate"]);
    // Called on the failed try and the retry; the duplicate never reached the handler.
    expect(calls).toBe(2);
    expect(await effectsOf(failed.event.id)).toHaveLength(1);
  });
});
