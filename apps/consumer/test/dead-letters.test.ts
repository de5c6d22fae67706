import { DeleteObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { awsEnvironment, type BootstrappedResources, s3Client } from "@outbox/devstack";
import exampleHandlers from "@outbox/example-handlers";
import { sleep } from "@outbox/shared";
import {
  drainQueue,
  expectUsageError,
  hangLimit,
  queueDepth,
  runEntryPoint,
  stack,
  startDaemonProcess,
} from "@outbox/test-kit";
import { afterAll, describe, expect, it, vi } from "vitest";
import { deadLetterBatches, WalkOutlastedHoldError } from "../src/cli/dead-letters.js";
import type { RedriveCounts } from "../src/cli/redrive.js";
import {
  effectCount,
  exampleEvent,
  queueFor,
  sendBody,
  sendRaw,
  type TestEvent,
  testLogger,
  useConsumerTestBed,
} from "./harness.js";

// Its tests start up to 2 programs one after another: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 2 }) });

const bed = useConsumerTestBed("consumer_dead_letters");
const s3 = s3Client(stack().aws);
afterAll(() => s3.destroy());

/** The command's environment: the two queues and SQS, nothing else (no database, no handlers). */
function commandEnv(queue: BootstrappedResources): Record<string, string> {
  return {
    ...awsEnvironment(stack().aws),
    CONSUMER_QUEUE_URL: queue.queueUrl,
    CONSUMER_DLQ_URL: queue.dlqUrl,
    LOG_LEVEL: "info",
  };
}

function consumerCli(queue: BootstrappedResources, args: string[], env: Record<string, string> = {}) {
  return runEntryPoint("apps/consumer/src/main.ts", args, { ...commandEnv(queue), ...env });
}

interface Listed {
  total: number;
  complete: boolean;
  messages: {
    messageId: string;
    eventId: string | null;
    eventType: string | null;
    reason: string | null;
    attempts: number;
    ageSeconds: number | null;
  }[];
}

async function listDlq(queue: BootstrappedResources): Promise<Listed> {
  const run = await consumerCli(queue, ["dlq", "list", "--json"]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Listed;
}

/** The summary line redrive prints: its counts, and whether it was a dry run. */
type Summary = RedriveCounts & { dryRun: boolean; complete: boolean };

/** The summary line (the last on stdout) and the lines before it. */
async function redrive(queue: BootstrappedResources, args: string[], code = 0) {
  const run = await consumerCli(queue, ["redrive", ...args]);
  expect(run.code, run.stderr).toBe(code);
  const lines = run.stdout.trim().split("\n");
  return {
    summary: JSON.parse(lines.at(-1) ?? "{}") as Summary,
    before: lines.slice(0, -1).map((line) => JSON.parse(line) as { wouldMove: { eventId: string } }),
  };
}

/** Events put into the DLQ as the consumer's quarantine would leave them, reason included. */
function deadEvents(types: readonly string[]): TestEvent[] {
  return types.map((type, index) => ({
    ...exampleEvent(`dead-${index}`),
    type,
    headers: { poison_reason: `unknown_event_type: no handler for the event type "${type}"` },
  }));
}

const eventIdsIn = (messages: { attributes: Record<string, string> }[]) =>
  messages.map((message) => message.attributes.event_id).sort();

describe("consumer dlq list", () => {
  it("shows each dead letter's event, reason and attempts, and consumes nothing", async () => {
    const queue = await queueFor("dlq-list", { maxReceiveCount: 1, visibilityTimeoutSeconds: 1 });
    // A poison message, quarantined by the consumer with its reason and its attempts.
    const poison = { ...exampleEvent("poison"), type: "nobody.handles" };
    await sendRaw(bed.sqs, queue.queueUrl, [poison]);
    const consumer = bed.consumer(queue, {
      handlers: exampleHandlers,
      dlqUrl: queue.dlqUrl,
      name: "dlq-list",
      waitTimeSeconds: 1,
    });
    consumer.start();
    await expect.poll(() => consumer.stats().poison, { timeout: 15_000 }).toBe(1);
    await consumer.drain();
    // One the redrive policy moves: received once and never deleted (maxReceiveCount 1).
    const failed = exampleEvent("failed");
    await sendRaw(bed.sqs, queue.queueUrl, [failed]);
    await bed.sqs.send(new ReceiveMessageCommand({ QueueUrl: queue.queueUrl, VisibilityTimeout: 1 }));
    await expect
      .poll(() => queueDepth(bed.sqs, queue.dlqUrl), { timeout: 15_000 })
      .toEqual({
        visible: 2,
        inFlight: 0,
      });

    const listed = await listDlq(queue);
    expect(listed.total).toBe(2);
    const byEvent = new Map(listed.messages.map((message) => [message.eventId, message]));
    expect(byEvent.get(poison.id)).toMatchObject({
      eventType: "nobody.handles",
      reason: 'unknown_event_type: no handler for the event type "nobody.handles"',
      attempts: 1,
    });
    // No reason of the consumer's: the redrive policy moved it (its attempts are what SQS kept).
    expect(byEvent.get(failed.id)).toMatchObject({ eventType: "example.created", reason: null });
    // Released at once: all visible again, none held; a second listing sees the same messages.
    expect(await queueDepth(bed.sqs, queue.dlqUrl)).toEqual({ visible: 2, inFlight: 0 });
    const again = await listDlq(queue);
    expect(again.messages.map((message) => message.messageId).sort()).toEqual(
      listed.messages.map((message) => message.messageId).sort(),
    );

    const table = await consumerCli(queue, ["dlq", "list"]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^MESSAGE ID\s+EVENT ID\s+EVENT TYPE\s+ATTEMPTS\s+AGE\s+REASON\n/);
    expect(table.stdout).toContain("unknown_event_type: no handler");
    expect(table.stdout).toContain("(redrive policy: the handler kept failing)");
  });
});

// What a terminal would act on: C0 and C1 controls, DEL, bidi overrides.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/;

describe("what the DLQ commands show of a hostile message", () => {
  it("escapes its control sequences and caps its length, in the table, the JSON and a dry run's lines", async () => {
    const queue = await queueFor("dlq-hostile");
    // OSC 52 would write the operator's clipboard; the event id is 5 095 characters.
    const osc52 = "order.placed\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007\u009b2J\u202e";
    await sendRaw(bed.sqs, queue.dlqUrl, [
      { ...exampleEvent("hostile"), id: "e".repeat(5_095), type: osc52 },
    ]);

    const table = await consumerCli(queue, ["dlq", "list"]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).not.toMatch(CONTROL);
    expect(table.stdout).toContain("order.placed\\x1b]52;c;");
    for (const line of table.stdout.split("\n")) expect(line.length).toBeLessThan(400);

    const listed = await listDlq(queue);
    expect(listed.complete).toBe(true);
    const [letter] = listed.messages;
    expect(letter?.eventType).toBe(
      "order.placed\\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\\x07\\x9b2J\\u{202e}",
    );
    expect(letter?.eventId).toBe(`${"e".repeat(1_000)}… (5095 chars)`);

    const dry = await consumerCli(queue, ["redrive", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).not.toMatch(CONTROL);
    expect(JSON.parse(dry.stdout.split("\n")[0] ?? "")).toMatchObject({
      wouldMove: { eventType: letter?.eventType, eventId: letter?.eventId },
    });
    // Only what is shown is escaped: the message in the DLQ is as it came.
    const [kept] = await drainQueue(bed.sqs, queue.dlqUrl);
    expect(kept?.attributes).toMatchObject({ event_type: osc52, event_id: "e".repeat(5_095) });
  });
});

describe("a walk of the DLQ longer than its hold", () => {
  it("says it did not cover the DLQ when its first messages come back, instead of ending as if complete", async () => {
    const queue = await queueFor("dlq-hold");
    await sendRaw(bed.sqs, queue.dlqUrl, [exampleEvent("held")]);
    // Longer than a receive's 1 s wait: local-aws-sqs fills a long poll for all of its wait.
    const holdSeconds = 2;
    const queues = {
      sqs: bed.sqs,
      s3,
      queueUrl: queue.queueUrl,
      dlqUrl: queue.dlqUrl,
      requestTimeoutMs: 5_000,
      callTimeoutMs: 5_000,
      holdSeconds,
      log: testLogger(),
      close: () => {},
    };
    const received: string[] = [];
    const walk = (async () => {
      for await (const batch of deadLetterBatches(queues, new AbortController().signal)) {
        received.push(...batch.map((message) => message.MessageId ?? ""));
        // The walk goes on past the hold of what it received: that comes back.
        await sleep(holdSeconds * 1_000 + 500);
      }
    })();

    const error = await walk.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(WalkOutlastedHoldError);
    // Its new receipts, to release (local-aws-sqs may hand it back twice in one long poll).
    const again = (error as WalkOutlastedHoldError).again;
    expect(again.length).toBeGreaterThan(0);
    expect(new Set(again.map((receipt) => receipt.messageId))).toEqual(new Set(received));
    expect((error as Error).message).toMatch(/^after 1 messages the walk outlasted its 2 s hold/);
    expect(received).toHaveLength(1);
  });
});

describe("a poison message's copy in the DLQ", () => {
  it("keeps the event's id and type when a header must stay behind, and carries its receive count", async () => {
    const queue = await queueFor("dlq-copy");
    const poison = { ...exampleEvent("crowded"), type: "nobody.handles" };
    // Ten attributes, the most SQS takes: eight headers (named to sort first) and the event's two.
    const attributes: Record<string, { DataType: string; StringValue: string }> = {};
    for (let n = 1; n <= 8; n += 1) attributes[`a_header_${n}`] = { DataType: "String", StringValue: `${n}` };
    attributes.event_id = { DataType: "String", StringValue: poison.id };
    attributes.event_type = { DataType: "String", StringValue: poison.type };
    await sendBody(bed.sqs, queue.queueUrl, JSON.stringify(poison.payload), attributes);
    const consumer = bed.consumer(queue, {
      handlers: exampleHandlers,
      dlqUrl: queue.dlqUrl,
      name: "dlq-copy",
      waitTimeSeconds: 1,
    });
    consumer.start();
    await expect.poll(() => consumer.stats().poison, { timeout: 15_000 }).toBe(1);
    await consumer.drain();

    const [copy] = await drainQueue(bed.sqs, queue.dlqUrl);
    expect(Object.keys(copy?.attributes ?? {})).toHaveLength(10);
    expect(copy?.attributes).toMatchObject({
      event_id: poison.id,
      event_type: poison.type,
      poison_receive_count: "1",
    });
    expect(copy?.attributes.poison_reason).toMatch(/^unknown_event_type: /);
    expect(Object.keys(copy?.attributes ?? {}).filter((name) => name.startsWith("a_header_"))).toHaveLength(
      6,
    );
  });
});

describe("consumer redrive", () => {
  it("to a FIFO queue: the message's group back, deduplicated by its DLQ message id", async () => {
    const queue = await queueFor("redrive-fifo", { fifo: true });
    const dead = deadEvents(["a.happened", "a.happened"]).map((event, index) => ({
      ...event,
      group: `customer-${index}`,
    }));
    await sendRaw(bed.sqs, queue.dlqUrl, dead);
    const listed = await listDlq(queue);

    const { summary } = await redrive(queue, []);
    expect(summary).toMatchObject({ matched: 2, moved: 2, failed: 0 });
    const back = await drainQueue(bed.sqs, queue.queueUrl);
    expect(back.map((message) => [message.attributes.event_id, message.groupId]).sort()).toEqual(
      dead.map((event) => [event.id, event.group]).sort(),
    );
    expect(back.map((message) => message.deduplicationId).sort()).toEqual(
      listed.messages.map((message) => `redrive-${message.messageId}`).sort(),
    );
  });

  it("moves every dead letter back to the queue, without the consumer's reason", async () => {
    const queue = await queueFor("redrive-all");
    const dead = deadEvents(["a.happened", "b.happened", "a.happened"]);
    await sendRaw(bed.sqs, queue.dlqUrl, dead);

    const { summary } = await redrive(queue, []);
    expect(summary).toEqual({
      received: 3,
      matched: 3,
      moved: 3,
      skipped: 0,
      failed: 0,
      objectGone: 0,
      undeleted: 0,
      dryRun: false,
      complete: true,
    });
    expect(await queueDepth(bed.sqs, queue.dlqUrl)).toEqual({ visible: 0, inFlight: 0 });
    const back = await drainQueue(bed.sqs, queue.queueUrl);
    expect(eventIdsIn(back)).toEqual(dead.map((event) => event.id).sort());
    for (const message of back) expect(message.attributes.poison_reason).toBeUndefined();
    expect(back.map((message) => message.body).sort()).toEqual(
      dead.map((event) => JSON.stringify(event.payload)).sort(),
    );
  });

  it("leaves a claim-checked message whose object is gone in the DLQ, says why, and moves the others", async () => {
    const queue = await queueFor("redrive-objects");
    const bucket = stack().claimCheckBucket ?? "";
    // As the relay sends a claim-checked event: the pointer as body, the payload's size as attribute.
    const claimed = ["kept-1", "gone", "kept-2"].map((name) => ({
      ...exampleEvent(name),
      payload: [
        "software.amazon.payloadoffloading.PayloadS3Pointer",
        { s3BucketName: bucket, s3Key: `redrive/${name}` },
      ],
      headers: { ExtendedPayloadSize: "16" },
    }));
    for (const event of claimed) {
      const key = (event.payload[1] as { s3Key: string }).s3Key;
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: '{"name":"large"}' }));
    }
    // A consumer on AWS's SQS extended client deleted it after processing, or the lifecycle expired it.
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: "redrive/gone" }));
    const plain = exampleEvent("plain");
    await sendRaw(bed.sqs, queue.dlqUrl, [...claimed, plain]);

    const run = await consumerCli(queue, ["redrive"]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}")).toEqual({
      received: 4,
      matched: 4,
      moved: 3,
      skipped: 0,
      failed: 0,
      objectGone: 1,
      undeleted: 0,
      dryRun: false,
      complete: true,
    });
    const warned = run.stderr
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.msg === "redrive: not redriven; the message stays in the DLQ");
    expect(warned).toEqual([
      expect.objectContaining({
        eventId: claimed[1]?.id,
        reason: `its claim-checked object s3://${bucket}/redrive/gone is gone (deleted, or expired): sent back, it would only come back as claimed_payload_missing`,
      }),
    ]);
    expect(eventIdsIn(await drainQueue(bed.sqs, queue.queueUrl))).toEqual(
      [claimed[0]?.id, claimed[2]?.id, plain.id].sort(),
    );
    // Released at once, not held for the run's hold.
    expect(await queueDepth(bed.sqs, queue.dlqUrl)).toEqual({ visible: 1, inFlight: 0 });
    expect((await listDlq(queue)).messages.map((message) => message.eventId)).toEqual([claimed[1]?.id]);
  });

  it("leaves a claim-checked message in the DLQ as failed when S3 does not answer, and moves the others", async () => {
    const queue = await queueFor("redrive-s3-down");
    const claimed = {
      ...exampleEvent("claimed"),
      payload: ["software.amazon.payloadoffloading.PayloadS3Pointer", { s3BucketName: "b", s3Key: "k" }],
      headers: { ExtendedPayloadSize: "16" },
    };
    const plain = exampleEvent("plain");
    await sendRaw(bed.sqs, queue.dlqUrl, [claimed, plain]);

    // Nothing listens on port 9 of 127.0.0.1: the HeadObject is refused, as in an S3 outage.
    const run = await consumerCli(queue, ["redrive"], {
      AWS_ENDPOINT_URL_S3: "http://127.0.0.1:9",
      AWS_MAX_ATTEMPTS: "1",
    });
    expect(run.code, run.stderr).toBe(1);
    expect(JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}")).toMatchObject({
      matched: 2,
      moved: 1,
      failed: 1,
      objectGone: 0,
      complete: true,
    });
    expect(run.stderr).toContain(
      "redrive: S3 did not say whether the message's object is there; the message stays in the DLQ",
    );
    expect(eventIdsIn(await drainQueue(bed.sqs, queue.queueUrl))).toEqual([plain.id]);
    expect(await queueDepth(bed.sqs, queue.dlqUrl)).toEqual({ visible: 1, inFlight: 0 });
  });

  it("by event type or by id moves only those, and releases the rest at once", async () => {
    const queue = await queueFor("redrive-filter");
    const dead = deadEvents(["a.happened", "b.happened", "a.happened", "c.happened"]);
    await sendRaw(bed.sqs, queue.dlqUrl, dead);

    const byType = await redrive(queue, ["--event-type", "a.happened"]);
    expect(byType.summary).toMatchObject({ received: 4, matched: 2, moved: 2, skipped: 2, failed: 0 });
    // The two others are visible again right away, not held for the run's visibility timeout.
    expect(await queueDepth(bed.sqs, queue.dlqUrl)).toEqual({ visible: 2, inFlight: 0 });
    expect(eventIdsIn(await drainQueue(bed.sqs, queue.queueUrl))).toEqual([dead[0]?.id, dead[2]?.id].sort());

    const c = dead[3]?.id ?? "";
    const byId = await redrive(queue, ["--id", c]);
    expect(byId.summary).toMatchObject({ received: 2, matched: 1, moved: 1, skipped: 1 });
    expect(eventIdsIn(await drainQueue(bed.sqs, queue.queueUrl))).toEqual([c]);
    expect(await queueDepth(bed.sqs, queue.dlqUrl)).toEqual({ visible: 1, inFlight: 0 });

    // An id that is not there: nothing moved, exit 1, the DLQ as it was.
    const missing = await redrive(queue, ["--id", c], 1);
    expect(missing.summary).toMatchObject({ matched: 0, moved: 0, skipped: 1 });
    expect(await queueDepth(bed.sqs, queue.dlqUrl)).toEqual({ visible: 1, inFlight: 0 });
    // An age bound no message meets.
    const young = await redrive(queue, ["--older-than", "3600s"]);
    expect(young.summary).toMatchObject({ matched: 0, moved: 0, skipped: 1 });
  });

  it("--dry-run prints what it would move and moves nothing", async () => {
    const queue = await queueFor("redrive-dry");
    const dead = deadEvents(["a.happened", "b.happened", "a.happened"]);
    await sendRaw(bed.sqs, queue.dlqUrl, dead);

    const { summary, before } = await redrive(queue, ["--event-type", "a.happened", "--dry-run"]);
    expect(summary).toMatchObject({ received: 3, matched: 2, moved: 0, skipped: 1, dryRun: true });
    expect(before.map((line) => line.wouldMove.eventId).sort()).toEqual([dead[0]?.id, dead[2]?.id].sort());
    expect(await queueDepth(bed.sqs, queue.dlqUrl)).toEqual({ visible: 3, inFlight: 0 });
    expect(await queueDepth(bed.sqs, queue.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it("SIGTERM mid-way: stops after the batch in hand, releases what it held, loses nothing", async () => {
    const queue = await queueFor("redrive-term");
    const total = 200;
    await sendRaw(bed.sqs, queue.dlqUrl, deadEvents(Array.from({ length: total }, () => "a.happened")));
    const run = startDaemonProcess("apps/consumer/src/main.ts", commandEnv(queue), { args: ["redrive"] });
    await expect
      .poll(async () => (await queueDepth(bed.sqs, queue.queueUrl)).visible, {
        timeout: 30_000,
        interval: 20,
      })
      .toBeGreaterThan(0);
    run.child.kill("SIGTERM");
    const exit = await run.exited;
    const summary = run.lines.find((line) => typeof line.moved === "number") as unknown as Summary;
    const [source, dlq] = await Promise.all([
      queueDepth(bed.sqs, queue.queueUrl),
      queueDepth(bed.sqs, queue.dlqUrl),
    ]);
    // Stopped early (exit 1) or done before the signal landed (exit 0): either way nothing is held
    // and every message is in exactly one of the two queues.
    expect(exit.code === 1 || (exit.code === 0 && summary.moved === total), run.stderr()).toBe(true);
    expect(dlq.inFlight).toBe(0);
    expect(source.visible).toBe(summary.moved);
    expect(source.visible + dlq.visible).toBe(total);
  });

  it("into a running consumer: every effect once, the ones it had already counted as duplicates", async () => {
    const queue = await queueFor("redrive-live");
    const processed = Array.from({ length: 4 }, (_, index) => exampleEvent(`had-${index}`));
    const consumer = bed.consumer(queue, {
      handlers: exampleHandlers,
      dlqUrl: queue.dlqUrl,
      name: "redrive-live",
      waitTimeSeconds: 1,
    });
    consumer.start();
    await sendRaw(bed.sqs, queue.queueUrl, processed);
    await expect.poll(() => consumer.stats().processed, { timeout: 15_000 }).toBe(processed.length);
    const effectsBefore = await effectCount(bed.database);
    // The DLQ holds copies of what the consumer already committed (a copy left behind by a kill
    // between send and delete) and events it never processed.
    const unprocessed = Array.from({ length: 3 }, (_, index) => exampleEvent(`new-${index}`));
    await sendRaw(bed.sqs, queue.dlqUrl, [...processed, ...unprocessed]);

    const { summary } = await redrive(queue, []);
    expect(summary).toMatchObject({ matched: 7, moved: 7, failed: 0 });
    await expect
      .poll(() => consumer.stats().processed + consumer.stats().duplicates, { timeout: 15_000 })
      .toBe(processed.length + 7);
    const stopped = await consumer.drain();
    expect(stopped).toMatchObject({
      processed: processed.length + unprocessed.length,
      duplicates: processed.length,
      failed: 0,
    });
    expect(await effectCount(bed.database)).toBe(effectsBefore + unprocessed.length);
    expect(await queueDepth(bed.sqs, queue.dlqUrl)).toEqual({ visible: 0, inFlight: 0 });
  });
});

describe("the DLQ commands' configuration", () => {
  it("redrive --id that is no id (../x) is a usage error at once, before the DLQ is walked", async () => {
    const queue = await queueFor("dlq-bad-id");
    // A DLQ nobody answers at: a walk would end in an SQS error, not a usage error.
    const env = { ...commandEnv(queue), CONSUMER_DLQ_URL: "http://127.0.0.1:1/000000000000/nowhere" };
    const run = await runEntryPoint("apps/consumer/src/main.ts", ["redrive", "--id", "../x"], env);
    expectUsageError(run, '--id needs event ids or message ids, got "../x"', /^usage: consumer redrive/);
  });

  it("without a DLQ, or with the queue as its own DLQ: one line each, exit 78", async () => {
    const queue = await queueFor("dlq-config");
    const env = commandEnv(queue);
    const [list, again] = await Promise.all([
      runEntryPoint("apps/consumer/src/main.ts", ["dlq", "list"], { ...env, CONSUMER_DLQ_URL: "" }),
      runEntryPoint("apps/consumer/src/main.ts", ["redrive"], {
        ...env,
        CONSUMER_DLQ_URL: queue.queueUrl,
        AWS_MAX_ATTEMPTS: "0",
      }),
    ]);
    expect({ code: list.code, stdout: list.stdout }).toEqual({ code: 78, stdout: "" });
    expect(list.stderr.trim().split("\n")).toEqual([
      "consumer dlq list: config error: CONSUMER_DLQ_URL: is required: the queue the dead letters are in",
    ]);
    expect({ code: again.code, stdout: again.stdout }).toEqual({ code: 78, stdout: "" });
    expect(again.stderr.trim().split("\n")).toEqual([
      'consumer redrive: config error: AWS_MAX_ATTEMPTS: must be between 1 and 10 (got "0")',
      "consumer redrive: config error: CONSUMER_DLQ_URL: must differ from CONSUMER_QUEUE_URL: it is the queue's DLQ",
    ]);
  });
});
