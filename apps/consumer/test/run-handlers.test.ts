import { createServer } from "node:net";
import type { OutboxTables } from "@outbox/client";
import { createDatabase, type DatabaseHandle } from "@outbox/shared";
import { createMigratedTestDatabase } from "@outbox/test-kit";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsumerOptionsError } from "../src/errors.js";
import {
  type BatchHandler,
  type ConsumedEvent,
  defineBatchHandler,
  defineHandlers,
  type HandlerContext,
  PoisonMessageError,
} from "../src/index.js";
import { type HandlerRun, runHandlers } from "../src/testing/index.js";

// The test kit's runHandlers against a real inbox: each outcome as the consumer decides it.

/** A table with no key of its own: an effect written twice shows as two rows. */
type KitEffects = { kit_effects: { event_id: string; consumer: string } };
type KitDatabase = OutboxTables & KitEffects;

let database: DatabaseHandle;
let db: Kysely<KitDatabase>;

beforeAll(async () => {
  ({ handle: database } = await createMigratedTestDatabase("run_handlers", {
    service: "consumer-test",
    poolMax: 12,
  }));
  db = database.db.withTables<KitEffects>();
  await sql`CREATE TABLE kit_effects (event_id uuid NOT NULL, consumer text NOT NULL)`.execute(db);
});
afterAll(async () => {
  await database.close(5_000);
});

function writeEffect(event: ConsumedEvent, { trx }: HandlerContext<KitDatabase>, consumer = "kit") {
  return trx.insertInto("kit_effects").values({ event_id: event.id, consumer }).execute();
}

async function effectsOf(eventId: string): Promise<string[]> {
  const rows = await db
    .selectFrom("kit_effects")
    .select("consumer")
    .where("event_id", "=", eventId)
    .execute();
  return rows.map((row) => row.consumer);
}

async function inboxOf(eventId: string): Promise<string[]> {
  const rows = await db.selectFrom("inbox").select("consumer").where("event_id", "=", eventId).execute();
  return rows.map((row) => row.consumer);
}

/** Handlers of "thing.done" that write the effect, counting their runs. */
function countingHandlers() {
  let runs = 0;
  const handlers = defineHandlers<{ "thing.done": { n: number } }, KitDatabase>({
    "thing.done": async (event, context) => {
      runs += 1;
      await writeEffect(event, context);
    },
  });
  return { handlers, runs: () => runs };
}

const outcomes = (runs: readonly HandlerRun[]) => runs.map((run) => run.outcome);

describe("runHandlers", () => {
  it("processes an event once: a second delivery is a duplicate, and the effect is written once", async () => {
    const { handlers, runs } = countingHandlers();

    const [first] = await runHandlers({
      handlers,
      pool: database.pool,
      events: [{ type: "thing.done", payload: { n: 1 } }],
    });
    if (first === undefined) throw new Error("no run");
    const second = await runHandlers({ handlers, pool: database.pool, events: [first.event] });

    expect(first.outcome).toBe("processed");
    expect(outcomes(second)).toEqual(["duplicate"]);
    expect(second[0]?.event.id).toBe(first.event.id);
    // A second delivery is a new message, as a re-publish is.
    expect(second[0]?.event.messageId).not.toBe(first.event.messageId);
    expect(runs()).toBe(1);
    expect(await effectsOf(first.event.id)).toEqual(["kit"]);
    expect(await inboxOf(first.event.id)).toEqual(["test"]);
  });

  it("keys the inbox by the consumer's name: another consumer processes the same event once too", async () => {
    const { handlers } = countingHandlers();
    const event = { id: "0193a4e0-7c1f-7000-8000-000000000001", type: "thing.done", payload: { n: 2 } };

    const billing = await runHandlers({ handlers, pool: database.pool, events: [event], name: "billing" });
    const shipping = await runHandlers({ handlers, pool: database.pool, events: [event], name: "shipping" });
    const again = await runHandlers({ handlers, pool: database.pool, events: [event], name: "billing" });

    expect([...outcomes(billing), ...outcomes(shipping), ...outcomes(again)]).toEqual([
      "processed",
      "processed",
      "duplicate",
    ]);
    expect((await inboxOf(event.id)).sort()).toEqual(["billing", "shipping"]);
    expect(await effectsOf(event.id)).toHaveLength(2);
  });

  it("hands the handler the event as the consumer does: id, type, payload, headers, receive count", async () => {
    const seen: ConsumedEvent[] = [];
    const handlers = defineHandlers<{ "thing.done": { n: number } }, KitDatabase>({
      "thing.done": async (event) => {
        seen.push(event);
      },
    });

    const [run] = await runHandlers({
      handlers,
      pool: database.pool,
      events: [{ type: "thing.done", payloadJson: '{"n": 3}', headers: { tenant: "acme" } }],
      receiveCount: 4,
    });

    expect(seen).toEqual([
      {
        id: run?.event.id,
        type: "thing.done",
        payload: { n: 3 },
        headers: { tenant: "acme" },
        messageId: run?.event.messageId,
        receiveCount: 4,
      },
    ]);
    expect(run?.event.payloadJson).toBe('{"n": 3}');
  });

  it("reports a handler's PoisonMessageError as poison with its reason, its writes rolled back", async () => {
    const handlers = defineHandlers<{ "thing.done": { n: number } }, KitDatabase>({
      "thing.done": async (event, context) => {
        await writeEffect(event, context);
        throw new PoisonMessageError("n must be positive");
      },
    });

    const [run] = await runHandlers({
      handlers,
      pool: database.pool,
      events: [{ type: "thing.done", payload: { n: -1 } }],
    });

    expect(run).toMatchObject({
      outcome: "poison",
      reason: "rejected_by_handler",
      detail: "n must be positive",
    });
    expect(await effectsOf(run?.event.id ?? "")).toEqual([]);
    expect(await inboxOf(run?.event.id ?? "")).toEqual([]);
  });

  it("reports what the consumer finds poison before any handler runs: a payload parse refuses, a type nobody handles, a body that is not JSON", async () => {
    let runs = 0;
    const handlers = defineHandlers<{ "thing.done": { n: number } }, KitDatabase>({
      "thing.done": {
        parse: (payload) => {
          if (typeof (payload as { n?: unknown }).n !== "number") throw new Error("n is not a number");
          return payload as { n: number };
        },
        handle: async () => {
          runs += 1;
        },
      },
    });

    const runsOf = await runHandlers({
      handlers,
      pool: database.pool,
      events: [
        { type: "thing.done", payload: { n: "three" } },
        { type: "thing.undone", payload: { n: 3 } },
        { type: "thing.done", payloadJson: "{n: 3}" },
      ],
    });

    expect(runsOf.map((run) => (run.outcome === "poison" ? [run.reason, run.detail] : run.outcome))).toEqual([
      ["payload_rejected", "n is not a number"],
      ["unknown_event_type", 'no handler for the event type "thing.undone"'],
      ["body_not_json", expect.stringContaining("JSON")],
    ]);
    expect(runs).toBe(0);
  });

  it("reports a thrown error as failed with that error, rolled back: a later delivery runs the handler again", async () => {
    const boom = new Error("downstream said no");
    let fail = true;
    const handlers = defineHandlers<{ "thing.done": { n: number } }, KitDatabase>({
      "thing.done": async (event, context) => {
        await writeEffect(event, context);
        if (fail) throw boom;
      },
    });

    const [failed] = await runHandlers({
      handlers,
      pool: database.pool,
      events: [{ type: "thing.done", payload: { n: 4 } }],
    });
    if (failed === undefined) throw new Error("no run");
    expect(failed).toMatchObject({ outcome: "failed", error: boom });
    expect(await effectsOf(failed.event.id)).toEqual([]);
    expect(await inboxOf(failed.event.id)).toEqual([]);

    fail = false;
    const retried = await runHandlers({ handlers, pool: database.pool, events: [failed.event] });
    expect(outcomes(retried)).toEqual(["processed"]);
    expect(await effectsOf(failed.event.id)).toEqual(["kit"]);
  });

  it("reports a handler that ended its transaction itself as poison (handler_left_transaction)", async () => {
    const handlers = defineHandlers<{ "thing.done": { n: number } }, KitDatabase>({
      "thing.done": async (event, context) => {
        // A statement list reaches Postgres whatever it ends with: the consumer finds out at its COMMIT.
        await sql.raw("SELECT 1; ABORT").execute(context.trx);
        await writeEffect(event, context).catch(() => {});
      },
    });

    const [run] = await runHandlers({
      handlers,
      pool: database.pool,
      events: [{ type: "thing.done", payload: { n: 9 } }],
    });

    expect(run).toMatchObject({ outcome: "poison", reason: "handler_left_transaction" });
    expect(await effectsOf(run?.event.id ?? "")).toEqual([]);
    expect(await inboxOf(run?.event.id ?? "")).toEqual([]);
  });

  it("fails a handler past its deadline, rolled back", async () => {
    const handlers = defineHandlers<{ "thing.done": { n: number } }, KitDatabase>({
      "thing.done": async (event, context) => {
        await writeEffect(event, context);
        // Never resolves on its own: only the deadline ends it.
        await new Promise((_, reject) => {
          context.deadline.signal.addEventListener("abort", () => reject(context.deadline.signal.reason));
        });
      },
    });

    const [run] = await runHandlers({
      handlers,
      pool: database.pool,
      events: [{ type: "thing.done", payload: { n: 5 } }],
      handlerTimeoutMs: 100,
    });

    expect(run?.outcome).toBe("failed");
    expect(run?.outcome === "failed" && run.error).toMatchObject({ name: "DeadlineExceededError" });
    expect(await effectsOf(run?.event.id ?? "")).toEqual([]);
  });

  it("runs a batch handler's events of one receive in one transaction, 10 to a receive", async () => {
    const batches: number[] = [];
    const handler: BatchHandler<"thing.done", { n: number }, KitDatabase> = defineBatchHandler({
      handleBatch: async (events, { trx }) => {
        batches.push(events.length);
        await trx
          .insertInto("kit_effects")
          .values(events.map((event) => ({ event_id: event.id, consumer: "batch" })))
          .execute();
      },
    });
    const handlers = defineHandlers<{ "thing.done": { n: number } }, KitDatabase>({ "thing.done": handler });
    const events = Array.from({ length: 12 }, (_, n) => ({ type: "thing.done", payload: { n } }));

    const runs = await runHandlers({ handlers, pool: database.pool, events, name: "batches" });

    expect(outcomes(runs)).toEqual(Array(12).fill("processed"));
    expect(batches).toEqual([10, 2]);
    for (const run of runs) expect(await effectsOf(run.event.id)).toEqual(["batch"]);
  });

  it("falls back to one message at a time when a batch fails: the poison event alone is poison, the others commit once", async () => {
    const batches: number[][] = [];
    const handlers = defineHandlers<{ "thing.done": { n: number } }, KitDatabase>({
      "thing.done": defineBatchHandler({
        maxBatchSize: 5,
        handleBatch: async (events, { trx }) => {
          batches.push(events.map((event) => event.payload.n));
          await trx
            .insertInto("kit_effects")
            .values(events.map((event) => ({ event_id: event.id, consumer: "fallback" })))
            .execute();
          if (events.some((event) => event.payload.n < 0)) throw new PoisonMessageError("negative n");
        },
      }),
    });

    const runs = await runHandlers({
      handlers,
      pool: database.pool,
      events: [1, -2, 3].map((n) => ({ type: "thing.done", payload: { n } })),
      name: "fallback",
    });

    expect(outcomes(runs)).toEqual(["processed", "poison", "processed"]);
    expect(runs[1]).toMatchObject({ reason: "rejected_by_handler", detail: "negative n" });
    // The batch, then each message in a batch of its own.
    expect(batches[0]).toEqual([1, -2, 3]);
    expect(batches.slice(1).sort()).toEqual([[-2], [1], [3]]);
    expect(await effectsOf(runs[0]?.event.id ?? "")).toEqual(["fallback"]);
    expect(await effectsOf(runs[1]?.event.id ?? "")).toEqual([]);
    expect(await effectsOf(runs[2]?.event.id ?? "")).toEqual(["fallback"]);
  });

  it("runs two deliveries of one event in one receive as the consumer would: one processed, one duplicate", async () => {
    const { handlers, runs } = countingHandlers();
    const event = { id: "0193a4e0-7c1f-7000-8000-000000000002", type: "thing.done", payload: { n: 6 } };

    const both = await runHandlers({ handlers, pool: database.pool, events: [event, event], name: "racing" });

    expect(outcomes(both).sort()).toEqual(["duplicate", "processed"]);
    expect(runs()).toBe(1);
    expect(await effectsOf(event.id)).toEqual(["kit"]);
  });

  it("releases the message, spending no attempt, when the database is unreachable", async () => {
    // A port that was free a moment ago: connecting to it is refused.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const unreachable = createDatabase({
      url: `postgres://nobody@127.0.0.1:${port}/none`,
      service: "consumer-test",
      poolMax: 1,
      statementTimeoutMs: 1_000,
      connectTimeoutMs: 1_000,
      idleInTransactionTimeoutMs: 10_000,
    });
    try {
      const { handlers, runs } = countingHandlers();
      const released = await runHandlers({
        handlers,
        pool: unreachable.pool,
        events: [{ type: "thing.done", payload: { n: 7 } }],
        statementTimeoutMs: 1_000,
      });
      expect(outcomes(released)).toEqual(["released"]);
      expect(runs()).toBe(0);
    } finally {
      await unreachable.close(1_000);
    }
  });

  it("refuses bad options and events with a clear error, before anything runs", async () => {
    const { handlers, runs } = countingHandlers();
    const pool = database.pool;
    const thing = { type: "thing.done", payload: { n: 8 } };

    await expect(runHandlers({ handlers, pool, events: [thing], name: "" })).rejects.toThrow(
      new ConsumerOptionsError("name must not be empty: it is the consumer's key in the inbox"),
    );
    await expect(runHandlers({ handlers, pool, events: [thing], handlerTimeoutMs: 5 })).rejects.toThrow(
      /^handlerTimeoutMs: .* \(got 5\)$/,
    );
    await expect(runHandlers({ handlers, pool, events: [thing], receiveCount: 0 })).rejects.toThrow(
      "receiveCount must be a whole number from 1, got 0",
    );
    await expect(
      runHandlers({ handlers, pool, events: [thing, { type: "thing.done", payload: () => 1 }] }),
    ).rejects.toThrow(new TypeError("events[1]: payload must be JSON-serialisable, or give payloadJson"));
    expect(runs()).toBe(0);
  });
});
