import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Message } from "@aws-sdk/client-sqs";
import { Deadline } from "@outbox/client";
import type { DatabaseHandle, Logger } from "@outbox/shared";
import { createMigratedTestDatabase } from "@outbox/test-kit";
import { type Kysely, sql } from "kysely";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import exampleHandlers, { type ExampleDatabase } from "../../../drills/src/handlers/example-handlers.js";
import type { PoisonReason } from "../src/errors.js";
import {
  defineBatchHandler,
  defineHandlers,
  type EventHandler,
  type HandlerSet,
  PoisonMessageError,
} from "../src/index.js";
import { ResultCounts } from "../src/loop/count-results.js";
import { DatabaseOutage } from "../src/loop/database-outage.js";
import { DrainDeadline } from "../src/loop/drain.js";
import { IntakeGate } from "../src/loop/intake-gate.js";
import { messageDelivery } from "../src/message/delivery.js";
import { type MessageSettings, processMessage } from "../src/message/handle-message.js";
import { processReceived } from "../src/message/handle-receive.js";
import type { Receipt } from "../src/message/receipt.js";
import { createConsumerMetrics } from "../src/metrics.js";
import type { Lease } from "../src/queue/heartbeat.js";
import { MessageSettler, type SettleQueue } from "../src/queue/settle.js";
import {
  capturingLogger,
  effectRowsOf,
  exampleEvent,
  inboxRowsOf,
  type TestEvent,
  testLogger,
} from "./harness.js";

// The per-message pipeline against a real inbox, with the SQS side recorded instead of sent.

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

/** What the pipeline asked of the queue, in order of kind. */
class RecordingQueue implements SettleQueue {
  readonly deleted: Receipt[] = [];
  readonly retried: { message: Receipt; delaySeconds: number }[] = [];
  readonly released: { messages: readonly Receipt[]; visibilitySeconds: number }[] = [];
  readonly deadLettered: { messageId: string | undefined; reason: string }[] = [];
  readonly sendToDeadLetterQueue: SettleQueue["sendToDeadLetterQueue"];

  constructor(withDlq: boolean) {
    this.sendToDeadLetterQueue = withDlq
      ? async (message: Message, reason: PoisonReason) => {
          this.deadLettered.push({ messageId: message.MessageId, reason: reason.toString() });
        }
      : undefined;
  }

  delete(message: Receipt): void {
    this.deleted.push({ messageId: message.messageId, receiptHandle: message.receiptHandle });
  }

  async releaseForRetry(message: Receipt, delaySeconds: number): Promise<void> {
    this.retried.push({ message: { ...message }, delaySeconds });
  }

  async release(messages: readonly Receipt[], visibilitySeconds: number): Promise<void> {
    this.released.push({ messages: messages.map((message) => ({ ...message })), visibilitySeconds });
  }

  get calls(): number {
    return this.deleted.length + this.retried.length + this.released.length + this.deadLettered.length;
  }
}

/** A pipeline over the test database: retry delays 2 s doubling to 300 s, handler timeout 5 s. */
function pipeline(
  handlers: HandlerSet<ExampleDatabase>,
  options: { consumer: string; withDlq?: boolean; log?: Logger },
) {
  const queue = new RecordingQueue(options.withDlq ?? true);
  const log = options.log ?? testLogger();
  const metrics = createConsumerMetrics(new Registry());
  const tracked = new Set<Lease>();
  const everTracked: string[] = [];
  const drain = new DrainDeadline(1_000);
  const settings: MessageSettings = {
    consumer: options.consumer,
    queueUrl: "http://localhost/000000000000/pipeline",
    delivery: messageDelivery("raw", []),
    handlerTimeoutMs: 5_000,
    statementTimeoutMs: 5_000,
  };
  const deps = {
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
    settle: new MessageSettler({ queue, retryBaseSeconds: 2, retryMaxSeconds: 300, log, metrics }),
    drain,
    counts: new ResultCounts(metrics),
    database: new DatabaseOutage({
      pool: database.pool,
      probeTimeoutMs: 5_000,
      gate: new IntakeGate(),
      stopping: new AbortController().signal,
      log,
      metrics,
    }),
    log,
  };
  return {
    queue,
    drain,
    tracked,
    everTracked,
    process: (message: Message) => processMessage(settings, deps, message, performance.now() + 30_000),
    /** One receive's messages, batch handlers' events in batches. */
    processAll: (messages: readonly Message[]) =>
      Promise.all(processReceived(settings, deps, messages, performance.now() + 30_000)),
  };
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

function receiptFor(message: Message): Receipt {
  return { messageId: message.MessageId ?? "", receiptHandle: message.ReceiptHandle ?? "" };
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

describe("processMessage", () => {
  it("applies a new event once, commits its inbox row and deletes the message after the commit", async () => {
    const { handlers, runs } = countingHandlers();
    const { queue, process, tracked, everTracked } = pipeline(handlers, { consumer: "new" });
    const event = exampleEvent("new");
    const message = received(event);

    await expect(process(message)).resolves.toBe("processed");

    expect(runs()).toBe(1);
    expect(await effectRowsOf(database, event.id)).toHaveLength(1);
    expect(await inboxRowsOf(database, "new")).toEqual([{ event_id: event.id }]);
    expect(queue.deleted).toEqual([receiptFor(message)]);
    expect(queue.calls).toBe(1);
    // Its lease was kept while the transaction ran, and let go after.
    expect(everTracked).toEqual([message.MessageId]);
    expect(tracked.size).toBe(0);
  });

  it("detects a second delivery of the same event, skips the handler and deletes it too", async () => {
    const { handlers, runs } = countingHandlers();
    const { queue, process } = pipeline(handlers, { consumer: "dup" });
    const event = exampleEvent("twice");
    // A re-publish: same event id, new SQS MessageId and receipt handle.
    const first = received(event);
    const second = received(event);

    await expect(process(first)).resolves.toBe("processed");
    await expect(process(second)).resolves.toBe("duplicate");

    expect(runs()).toBe(1);
    expect(await effectRowsOf(database, event.id)).toHaveLength(1);
    expect(await inboxRowsOf(database, "dup")).toHaveLength(1);
    expect(queue.deleted).toEqual([receiptFor(first), receiptFor(second)]);
    expect(queue.retried).toEqual([]);
    expect(queue.released).toEqual([]);
  });

  it("sends a malformed message to the DLQ with its reason and deletes it, without touching the inbox", async () => {
    const { handlers, runs } = countingHandlers();
    const { queue, process } = pipeline(handlers, { consumer: "malformed" });
    const notJson = received(exampleEvent("not-json"), 1, "{not json");
    const unknownType = received({ ...exampleEvent("unknown"), type: "nobody.handles" });
    const badPayload = received({ ...exampleEvent(), payload: { name: "" } });

    await expect(process(notJson)).resolves.toBe("poison");
    await expect(process(unknownType)).resolves.toBe("poison");
    await expect(process(badPayload)).resolves.toBe("poison");

    expect(queue.deadLettered.map(({ messageId, reason }) => [messageId, reason.split(":")[0]])).toEqual([
      [notJson.MessageId, "body_not_json"],
      [unknownType.MessageId, "unknown_event_type"],
      [badPayload.MessageId, "payload_rejected"],
    ]);
    expect(queue.deleted).toEqual([receiptFor(notJson), receiptFor(unknownType), receiptFor(badPayload)]);
    expect(runs()).toBe(0);
    expect(await inboxRowsOf(database, "malformed")).toEqual([]);
  });

  it("quarantines a message its handler rejects as poison, rolling back what the handler wrote", async () => {
    const { queue, process } = pipeline(
      effectThen(async () => {
        throw new PoisonMessageError("never valid");
      }),
      { consumer: "rejected" },
    );
    const event = exampleEvent("rejected");
    const message = received(event);

    await expect(process(message)).resolves.toBe("poison");

    expect(queue.deadLettered).toEqual([
      { messageId: message.MessageId, reason: "rejected_by_handler: never valid" },
    ]);
    expect(queue.deleted).toEqual([receiptFor(message)]);
    expect(await effectRowsOf(database, event.id)).toEqual([]);
    expect(await inboxRowsOf(database, "rejected")).toEqual([]);
  });

  it("without a DLQ leaves a malformed message to the redrive policy: retried later, not deleted", async () => {
    const { handlers } = countingHandlers();
    const { queue, process } = pipeline(handlers, { consumer: "no-dlq", withDlq: false });
    const message = received(exampleEvent("not-json"), 2, "{not json");

    await expect(process(message)).resolves.toBe("failed");

    expect(queue.retried).toEqual([{ message: receiptFor(message), delaySeconds: 4 }]);
    expect(queue.deleted).toEqual([]);
  });

  it("rolls back a failing handler and hides the message for its retry delay, doubling per receive", async () => {
    const { queue, process } = pipeline(
      effectThen(async () => {
        throw new Error("downstream said no");
      }),
      { consumer: "failing" },
    );
    const event = exampleEvent("failing");
    const third = received(event, 3);
    const tenth = received(event, 10);

    await expect(process(third)).resolves.toBe("failed");
    await expect(process(tenth)).resolves.toBe("failed");

    // 2 s · 2^(receives − 1), capped at 300 s.
    expect(queue.retried).toEqual([
      { message: receiptFor(third), delaySeconds: 8 },
      { message: receiptFor(tenth), delaySeconds: 300 },
    ]);
    expect(queue.deleted).toEqual([]);
    expect(queue.released).toEqual([]);
    expect(await effectRowsOf(database, event.id)).toEqual([]);
    expect(await inboxRowsOf(database, "failing")).toEqual([]);
  });

  it("rolls back a handler still running at the drain deadline and gives the message back at once", async () => {
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const { queue, process, drain } = pipeline(
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
    drain.start(drainDeadline);
    const inTime = await drain.finish(
      result.then(() => undefined),
      () => result.then(() => undefined),
    );

    expect(inTime).toBe(false);
    await expect(result).resolves.toBe("released");
    expect(queue.released).toEqual([{ messages: [receiptFor(message)], visibilitySeconds: 0 }]);
    expect(queue.retried).toEqual([]);
    expect(queue.deleted).toEqual([]);
    expect(await effectRowsOf(database, event.id)).toEqual([]);
    expect(await inboxRowsOf(database, "drained")).toEqual([]);
    drain.end();
    drainDeadline.dispose();
  });

  it("releases untouched a message whose turn comes when the drain has no time left for it", async () => {
    const { handlers, runs } = countingHandlers();
    const { queue, process, drain } = pipeline(handlers, { consumer: "late" });
    const message = received(exampleEvent("late"));
    // Less than the 1 s safety margin left.
    const drainDeadline = Deadline.after(500);
    drain.start(drainDeadline);

    await expect(process(message)).resolves.toBe("released");

    expect(runs()).toBe(0);
    expect(queue.released).toEqual([{ messages: [receiptFor(message)], visibilitySeconds: 0 }]);
    expect(queue.calls).toBe(1);
    drain.end();
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
  { name: "ABORT, insert, throw", sent: "SELECT 1; ABORT", after: "throw", inboxKept: false },
  { name: "ABORT, insert, return", sent: "SELECT 1; ABORT", after: "return", inboxKept: false },
  { name: "SELECT 1; COMMIT, insert, throw", sent: "SELECT 1; COMMIT", after: "throw", inboxKept: true },
  { name: "ABORT; BEGIN, insert, return", sent: "SELECT 1; ABORT; BEGIN", after: "return", inboxKept: false },
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
      const { queue, process } = pipeline(handlers, { consumer });
      const event = exampleEvent("escape");
      const message = received(event);

      await expect(process(message)).resolves.toBe("poison");

      // Into the DLQ with a reason that says what happened: never deleted as processed, never retried
      // (every retry would run the broken handler again).
      expect(queue.deadLettered).toEqual([
        { messageId: message.MessageId, reason: expect.stringMatching(/^handler_left_transaction: /) },
      ]);
      expect(queue.retried).toEqual([]);
      expect(await effectRowsOf(database, event.id)).toEqual([]);
      // The handler's COMMIT took the inbox row with it: nothing the consumer can undo, and the reason says so.
      expect(await inboxRowsOf(database, consumer)).toEqual(
        breakOut.inboxKept ? [{ event_id: event.id }] : [],
      );
    });
  }

  it("without a DLQ: retried later like any failure, not deleted", async () => {
    const breakOutOf = breakingOut(breakOuts[1]);
    const handlers = defineHandlers<object, ExampleDatabase>(
      {},
      { fallback: (event, { trx }) => breakOutOf(trx, [event.id]) },
    );
    const { queue, process } = pipeline(handlers, { consumer: "escape-no-dlq", withDlq: false });
    const event = exampleEvent("escape");
    const message = received(event);

    await expect(process(message)).resolves.toBe("failed");

    expect(queue.retried).toEqual([{ message: receiptFor(message), delaySeconds: 2 }]);
    expect(queue.deleted).toEqual([]);
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
      const { queue, processAll } = pipeline(handlers, { consumer });
      const events = [exampleEvent("one"), exampleEvent("two"), exampleEvent("three")];
      const messages = events.map((event) => received(event));

      await expect(processAll(messages)).resolves.toEqual(["poison", "poison", "poison"]);

      expect(queue.deadLettered.map((letter) => letter.messageId).sort()).toEqual(
        messages.map((message) => message.MessageId).sort(),
      );
      for (const letter of queue.deadLettered) expect(letter.reason).toMatch(/^handler_left_transaction: /);
      expect(queue.retried).toEqual([]);
      for (const event of events) expect(await effectRowsOf(database, event.id)).toEqual([]);
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
    const { queue, process } = pipeline(handlers, { consumer: "caught" });
    const event = exampleEvent("caught");
    const message = received(event);

    await expect(process(message)).resolves.toBe("failed");

    expect(queue.deadLettered).toEqual([]);
    expect(queue.retried).toHaveLength(1);
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
    const { lines, log } = capturingLogger();
    const { process } = pipeline(handlers, { consumer: "personal", log });

    await expect(process(received(exampleEvent("twice")))).resolves.toBe("failed");
    await expect(process(received(exampleEvent("cast")))).resolves.toBe("failed");

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
