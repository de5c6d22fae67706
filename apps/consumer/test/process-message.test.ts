import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Message } from "@aws-sdk/client-sqs";
import { Deadline } from "@outbox/client";
import exampleHandlers, { type ExampleDatabase } from "@outbox/example-handlers";
import { type DatabaseHandle, DrainDeadline, type Logger } from "@outbox/shared";
import { capturingLogger, createMigratedTestDatabase } from "@outbox/test-kit";
import { type Kysely, sql } from "kysely";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  defineBatchHandler,
  defineHandlers,
  type EventHandler,
  type HandlerSet,
  PoisonMessageError,
} from "../src/index.js";
import { ResultCounts } from "../src/loop/count-results.js";
import { DatabaseOutage } from "../src/loop/database-outage.js";
import { drainWithin } from "../src/loop/drain.js";
import { IntakeGate } from "../src/loop/intake-gate.js";
import { messageDelivery } from "../src/message/delivery.js";
import type { MessageFate } from "../src/message/fate.js";
import { messagePipeline } from "../src/message/pipeline.js";
import { createConsumerMetrics } from "../src/metrics.js";
import type { Lease } from "../src/queue/heartbeat.js";
import { effectRowsOf, exampleEvent, inboxRowsOf, type TestEvent, testLogger } from "./harness.js";

// The per-message pipeline against a real inbox: each message's fate, which MessageQueue carries out on SQS.

let database: DatabaseHandle;

beforeAll(async () => {
  ({ handle: database } = await createMigratedTestDatabase("consumer_pipeline", {
    service: "consumer-test",
    poolMax: 5,
  }));
});
afterAll(async () => {
  await database.close(5_000);
});

/** A pipeline over the test database: retry delays 2 s doubling to 300 s, handler timeout 5 s. */
function pipeline(
  handlers: HandlerSet<ExampleDatabase>,
  options: { consumer: string; withDlq?: boolean; log?: Logger },
) {
  const log = options.log ?? testLogger();
  const metrics = createConsumerMetrics(new Registry());
  const tracked = new Set<Lease>();
  const everTracked: string[] = [];
  const drain = new DrainDeadline();
  const messages = messagePipeline({
    consumer: options.consumer,
    queueUrl: "http://localhost/000000000000/pipeline",
    delivery: messageDelivery("raw", []),
    handlerTimeoutMs: 5_000,
    statementTimeoutMs: 5_000,
    pool: database.pool,
    handlers,
    heartbeat: {
      track(lease: Lease) {
        tracked.add(lease);
        everTracked.push(lease.messageId);
      },
      untrack(lease: Lease) {
        tracked.delete(lease);
      },
    },
    drain,
    drainMarginMs: 1_000,
    database: new DatabaseOutage({
      pool: database.pool,
      probeTimeoutMs: 5_000,
      gate: new IntakeGate(),
      stopping: new AbortController().signal,
      log,
      metrics,
    }),
    retryBaseSeconds: 2,
    retryMaxSeconds: 300,
    deadLetterQueue: options.withDlq ?? true,
    counts: new ResultCounts(metrics),
    log,
    metrics,
  });
  return {
    drain,
    tracked,
    everTracked,
    process: (message: Message) => messages.handle(message, performance.now() + 30_000),
    /** One receive's messages, batch handlers' events in batches. */
    processAll: (received: readonly Message[]) =>
      Promise.all(messages.handleReceive(received, performance.now() + 30_000)),
  };
}

/** A message's fate: to the DLQ with a reason of this kind (then deleted). */
function poison(kind: string, detail: unknown = expect.any(String)): MessageFate {
  return { result: "poison", reason: expect.objectContaining({ kind, detail }) };
}

/** A message's fate: retried after `retryInSeconds`, for `cause`. */
function failed(retryInSeconds: number, cause: unknown = expect.anything()): MessageFate {
  return { result: "failed", cause, retryInSeconds };
}

/** A message as SQS hands it over with raw delivery. */
function received(event: TestEvent, receiveCount = 1, body = JSON.stringify(event.payload)): Message {
  return {
    MessageId: randomUUID(),
    ReceiptHandle: `receipt-${randomUUID()}`,
    Body: body,
    MessageAttributes: {
      event_id: { DataType: "String", StringValue: event.id },
      event_type: { DataType: "String", StringValue: event.type },
    },
    Attributes: { ApproximateReceiveCount: String(receiveCount) },
  };
}

/** The example handler, counting its runs. */
function countingHandlers(): { handlers: HandlerSet<ExampleDatabase>; runs: () => number } {
  const entry = exampleHandlers.find("example.created");
  if (entry === undefined || typeof entry === "function" || !("handle" in entry))
    throw new Error("example handler changed shape");
  let runs = 0;
  const handlers = defineHandlers<{ "example.created": { name: string } }, ExampleDatabase>({
    "example.created": {
      parse: (payload) => entry.parse(payload) as { name: string },
      handle: (event, context) => {
        runs += 1;
        return entry.handle(event, context);
      },
    },
  });
  return { handlers, runs: () => runs };
}

/** One handler for every event type: writes the effect, then does what `then` says. */
function effectThen(then: () => Promise<void>): HandlerSet<ExampleDatabase> {
  const handle: EventHandler<string, unknown, ExampleDatabase> = async (event, { trx }) => {
    await trx
      .insertInto("example_effects")
      .values({ event_id: event.id, event_type: event.type, payload: "{}" })
      .execute();
    await then();
  };
  return defineHandlers<object, ExampleDatabase>({}, { fallback: handle });
}

describe("the message pipeline (handleMessage)", () => {
  it("applies a new event once and commits its inbox row: its fate is processed (a delete)", async () => {
    const { handlers, runs } = countingHandlers();
    const { process, tracked, everTracked } = pipeline(handlers, { consumer: "new" });
    const event = exampleEvent("new");
    const message = received(event);

    // Its fate once committed: deleted.
    await expect(process(message)).resolves.toEqual({ result: "processed" });

    expect(runs()).toBe(1);
    expect(await effectRowsOf(database, event.id)).toHaveLength(1);
    expect(await inboxRowsOf(database, "new")).toEqual([{ event_id: event.id }]);
    // Its lease was kept while the transaction ran, and let go after.
    expect(everTracked).toEqual([message.MessageId]);
    expect(tracked.size).toBe(0);
  });

  it("detects a second delivery of the same event and skips the handler: its fate is duplicate (a delete)", async () => {
    const { handlers, runs } = countingHandlers();
    const { process } = pipeline(handlers, { consumer: "dup" });
    const event = exampleEvent("twice");
    // A re-publish: same event id, new SQS MessageId and receipt handle.
    const first = received(event);
    const second = received(event);

    // Both deleted: the first once committed, the second as the duplicate the inbox caught.
    await expect(process(first)).resolves.toEqual({ result: "processed" });
    await expect(process(second)).resolves.toEqual({ result: "duplicate" });

    expect(runs()).toBe(1);
    expect(await effectRowsOf(database, event.id)).toHaveLength(1);
    expect(await inboxRowsOf(database, "dup")).toHaveLength(1);
  });

  it("gives a malformed message the poison fate with its reason (to the DLQ), without touching the inbox", async () => {
    const { handlers, runs } = countingHandlers();
    const { process } = pipeline(handlers, { consumer: "malformed" });
    const notJson = received(exampleEvent("not-json"), 1, "{not json");
    const unknownType = received({ ...exampleEvent("unknown"), type: "nobody.handles" });
    const badPayload = received({ ...exampleEvent(), payload: { name: "" } });

    // To the DLQ with its reason, then deleted (MessageQueue).
    await expect(process(notJson)).resolves.toEqual(poison("body_not_json"));
    await expect(process(unknownType)).resolves.toEqual(poison("unknown_event_type"));
    await expect(process(badPayload)).resolves.toEqual(poison("payload_rejected"));

    expect(runs()).toBe(0);
    expect(await inboxRowsOf(database, "malformed")).toEqual([]);
  });

  it("quarantines a message its handler rejects as poison, rolling back what the handler wrote", async () => {
    const { process } = pipeline(
      effectThen(async () => {
        throw new PoisonMessageError("never valid");
      }),
      { consumer: "rejected" },
    );
    const event = exampleEvent("rejected");
    const message = received(event);

    await expect(process(message)).resolves.toEqual(poison("rejected_by_handler", "never valid"));

    expect(await effectRowsOf(database, event.id)).toEqual([]);
    expect(await inboxRowsOf(database, "rejected")).toEqual([]);
  });

  it("without a DLQ leaves a malformed message to the redrive policy: its fate is a retry, not a delete", async () => {
    const { handlers } = countingHandlers();
    const { process } = pipeline(handlers, { consumer: "no-dlq", withDlq: false });
    const message = received(exampleEvent("not-json"), 2, "{not json");

    // Released for its retry delay: never deleted.
    await expect(process(message)).resolves.toEqual(
      failed(4, expect.objectContaining({ kind: "body_not_json" })),
    );
  });

  it("rolls back a failing handler: its fate is a retry after a delay doubling per receive", async () => {
    const { process } = pipeline(
      effectThen(async () => {
        throw new Error("downstream said no");
      }),
      { consumer: "failing" },
    );
    const event = exampleEvent("failing");
    const third = received(event, 3);
    const tenth = received(event, 10);

    // 2 s · 2^(receives − 1), capped at 300 s.
    const cause = expect.objectContaining({ message: "downstream said no" });
    await expect(process(third)).resolves.toEqual(failed(8, cause));
    await expect(process(tenth)).resolves.toEqual(failed(300, cause));

    expect(await effectRowsOf(database, event.id)).toEqual([]);
    expect(await inboxRowsOf(database, "failing")).toEqual([]);
  });

  it("rolls back a handler still running at the drain deadline and gives the message back at once", async () => {
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const { process, drain } = pipeline(
      effectThen(async () => {
        started();
        // Past any drain deadline: only the rollback ends this message.
        await new Promise((resolve) => setTimeout(resolve, 10_000).unref());
      }),
      { consumer: "drained" },
    );
    const event = exampleEvent("drained");
    const message = received(event);

    const result = process(message);
    await running;
    const drainDeadline = Deadline.after(50);
    const inTime = await drainWithin(drain, drainDeadline, {
      finished: result.then(() => undefined),
      inHand: () => result.then(() => undefined),
      stopHeartbeat: async () => {},
      flushDeletes: async () => {},
    });

    expect(inTime).toBe(false);
    // Released at once (visibility 0): not retried, not deleted.
    await expect(result).resolves.toEqual({ result: "released" });
    expect(await effectRowsOf(database, event.id)).toEqual([]);
    expect(await inboxRowsOf(database, "drained")).toEqual([]);
    drainDeadline.dispose();
  });

  it("releases untouched a message whose turn comes when the drain has no time left for it", async () => {
    const { handlers, runs } = countingHandlers();
    const { process, drain } = pipeline(handlers, { consumer: "late" });
    const message = received(exampleEvent("late"));
    // Less than the 1 s safety margin left.
    const drainDeadline = Deadline.after(500);
    const unlink = drain.follow(drainDeadline);

    await expect(process(message)).resolves.toEqual({ result: "released" });

    expect(runs()).toBe(0);
    unlink();
    drainDeadline.dispose();
  });
});

/** The example effect of one event, as a handler writes it on the transaction it was given. */
function insertEffect(trx: Kysely<ExampleDatabase>, eventId: string) {
  return trx
    .insertInto("example_effects")
    .values({ event_id: eventId, event_type: "example.created", payload: "{}" })
    .execute();
}

/**
 * The three measured break-outs, and the list that opens a transaction of its own: each
 * sent as a statement list, which pg sends as plain text whatever it starts with.
 */
const breakOuts = [
  { name: "ABORT, insert, throw", sent: "SELECT 1; ABORT", after: "throw" },
  { name: "ABORT, insert, return", sent: "SELECT 1; ABORT", after: "return" },
  { name: "SELECT 1; COMMIT, insert, throw", sent: "SELECT 1; COMMIT", after: "throw" },
  { name: "SELECT 1; COMMIT; BEGIN, insert, return", sent: "SELECT 1; COMMIT; BEGIN", after: "return" },
  { name: "ABORT; BEGIN, insert, return", sent: "SELECT 1; ABORT; BEGIN", after: "return" },
] as const;

/** Sends `sent` on its transaction, inserts its effect, then throws or returns (swallowing any refusal). */
function breakingOut(breakOut: (typeof breakOuts)[number]) {
  return async (trx: Kysely<ExampleDatabase>, eventIds: readonly string[]): Promise<void> => {
    await sql.raw(breakOut.sent).execute(trx);
    const inserted = Promise.all(eventIds.map((eventId) => insertEffect(trx, eventId)));
    if (breakOut.after === "throw") {
      await inserted;
      throw new Error("the handler failed after its insert");
    }
    await inserted.catch(() => {});
  };
}

describe("a handler that ends the inbox transaction itself", () => {
  for (const breakOut of breakOuts) {
    it(`${breakOut.name}: fails loudly, commits no effect, never deletes the message as processed`, async () => {
      const breakOutOf = breakingOut(breakOut);
      const consumer = `escape-${breakOuts.indexOf(breakOut)}`;
      const handlers = defineHandlers<object, ExampleDatabase>(
        {},
        { fallback: (event, { trx }) => breakOutOf(trx, [event.id]) },
      );
      const { process } = pipeline(handlers, { consumer });
      const event = exampleEvent("escape");
      const message = received(event);

      // Into the DLQ with a reason that says what happened: never deleted as processed, never retried
      // (every retry would run the broken handler again).
      await expect(process(message)).resolves.toEqual(poison("handler_left_transaction"));

      expect(await effectRowsOf(database, event.id)).toEqual([]);
      // A COMMIT of the handler's took the inbox row with it; the consumer deleted it again: no row
      // vouches for an effect that never ran.
      expect(await inboxRowsOf(database, consumer)).toEqual([]);
    });
  }

  it("SELECT 1; COMMIT: redriven once the handler is fixed, the message runs it, and its effect is there once", async () => {
    let broken = true;
    const handlers = defineHandlers<object, ExampleDatabase>(
      {},
      {
        fallback: async (event, { trx }) => {
          if (broken) await sql.raw("SELECT 1; COMMIT").execute(trx);
          await insertEffect(trx, event.id);
        },
      },
    );
    const { process } = pipeline(handlers, { consumer: "escape-redrive" });
    const event = exampleEvent("escape-redrive");
    await expect(process(received(event))).resolves.toEqual(poison("handler_left_transaction"));
    expect(await inboxRowsOf(database, "escape-redrive")).toEqual([]);

    // The fix deployed, the DLQ's copy redriven (a new MessageId, the same event), and redriven twice.
    broken = false;
    await expect(process(received(event))).resolves.toEqual({ result: "processed" });
    await expect(process(received(event))).resolves.toEqual({ result: "duplicate" });
    expect(await effectRowsOf(database, event.id)).toHaveLength(1);
    expect(await inboxRowsOf(database, "escape-redrive")).toEqual([{ event_id: event.id }]);
  });

  it("a ROLLBACK in the handler, then another delivery's commit: the consumer deletes no row it did not write", async () => {
    const event = exampleEvent("escape-other");
    const handlers = defineHandlers<object, ExampleDatabase>(
      {},
      {
        // Left its transaction (its inbox row gone with the ROLLBACK), then wrote the event's inbox
        // row on its own, as another delivery's commit would: not the transaction's row, not undone.
        fallback: async (_, { trx }) => {
          await sql
            .raw(
              `SELECT 1; ROLLBACK; INSERT INTO inbox (consumer, event_id, message_id) VALUES ('escape-other', '${event.id}', 'm-other')`,
            )
            .execute(trx);
        },
      },
    );
    const { process } = pipeline(handlers, { consumer: "escape-other" });
    await expect(process(received(event))).resolves.toEqual(poison("handler_left_transaction"));
    expect(await inboxRowsOf(database, "escape-other")).toEqual([{ event_id: event.id }]);
  });

  it("without a DLQ: retried later like any failure, not deleted", async () => {
    const breakOutOf = breakingOut(breakOuts[1]);
    const handlers = defineHandlers<object, ExampleDatabase>(
      {},
      { fallback: (event, { trx }) => breakOutOf(trx, [event.id]) },
    );
    const { process } = pipeline(handlers, { consumer: "escape-no-dlq", withDlq: false });
    const event = exampleEvent("escape");
    const message = received(event);

    await expect(process(message)).resolves.toEqual(
      failed(2, expect.objectContaining({ kind: "handler_left_transaction" })),
    );
    expect(await effectRowsOf(database, event.id)).toEqual([]);
  });

  for (const breakOut of breakOuts) {
    it(`in a batch handler, ${breakOut.name}: every message of the batch to the DLQ, no effect`, async () => {
      const breakOutOf = breakingOut(breakOut);
      const consumer = `escape-batch-${breakOuts.indexOf(breakOut)}`;
      const handlers = defineHandlers<{ "example.created": { name: string } }, ExampleDatabase>({
        "example.created": defineBatchHandler({
          handleBatch: (events, { trx }) =>
            breakOutOf(
              trx,
              events.map((event) => event.id),
            ),
        }),
      });
      const { processAll } = pipeline(handlers, { consumer });
      const events = [exampleEvent("one"), exampleEvent("two"), exampleEvent("three")];
      const messages = events.map((event) => received(event));

      const fate = poison("handler_left_transaction");
      await expect(processAll(messages)).resolves.toEqual([fate, fate, fate]);
      for (const event of events) expect(await effectRowsOf(database, event.id)).toEqual([]);
      expect(await inboxRowsOf(database, consumer)).toEqual([]);
    });
  }

  it("a handler that caught its own failed statement: a plain failure, saying nothing was written", async () => {
    const handlers = defineHandlers<object, ExampleDatabase>(
      {},
      {
        fallback: async (event, { trx }) => {
          await insertEffect(trx, event.id);
          await sql`SELECT 1 / 0`.execute(trx).catch(() => {});
        },
      },
    );
    const { process } = pipeline(handlers, { consumer: "caught" });
    const event = exampleEvent("caught");
    const message = received(event);

    await expect(process(message)).resolves.toEqual(
      failed(2, expect.objectContaining({ message: expect.stringMatching(/nothing was written/) })),
    );
    expect(await effectRowsOf(database, event.id)).toEqual([]);
    expect(await inboxRowsOf(database, "caught")).toEqual([]);
  });
});

describe("a handler's database error in the log", () => {
  it("says the SQLSTATE, the constraint and the table, never the data Postgres quotes", async () => {
    await sql`CREATE TABLE people (email text CONSTRAINT people_email_key UNIQUE)`.execute(database.db);
    const email = "alice@example.com";
    const handlers = defineHandlers<object, ExampleDatabase>(
      {},
      {
        fallback: async (event, { trx }) => {
          if ((event.payload as { name: string }).name === "twice") {
            await sql`INSERT INTO people VALUES (${email})`.execute(trx);
          } else {
            // A data exception: Postgres quotes the value it refused in its message.
            await sql`SELECT ${email}::int`.execute(trx);
          }
        },
      },
    );
    await database.db.executeQuery(sql`INSERT INTO people VALUES (${email})`.compile(database.db));
    const { written: lines, log } = capturingLogger();
    const { process } = pipeline(handlers, { consumer: "personal", log });

    await expect(process(received(exampleEvent("twice")))).resolves.toMatchObject({ result: "failed" });
    await expect(process(received(exampleEvent("cast")))).resolves.toMatchObject({ result: "failed" });

    const failures = lines.map((line) => JSON.parse(line) as { msg: string; err?: Record<string, unknown> });
    const [unique, cast] = failures.filter((line) => line.msg === "message failed; retrying later");
    expect(unique?.err).toMatchObject({
      code: "23505",
      constraint: "people_email_key",
      table: "people",
      message: 'duplicate key value violates unique constraint "people_email_key"',
    });
    expect(unique?.err).not.toHaveProperty("detail");
    expect(cast?.err).toMatchObject({
      code: "22P02",
      message: 'invalid input syntax for type integer: "[REDACTED]"',
    });
    for (const line of lines) expect(line).not.toContain("alice");
  });
});
