import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { EVENT_ID_ATTRIBUTE, EVENT_TYPE_ATTRIBUTE } from "@outbox/client";
import { walkDeadLetters } from "@outbox/consumer/operations";
import { type BootstrappedResources, bootstrapResources, s3Client } from "@outbox/devstack";
import { awsClients, capturingLogger, stack, uniqueName } from "@outbox/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keptDeadLetter } from "../../consumer/src/cli/dead-letters.js";
import { DeadLetterDesk } from "../src/reads/dead-letters.js";

/*
 * A DLQ listing (the console's desk, `consumer dlq list`'s walk) keeps a capped description of each
 * message, never its body: what it holds does not grow with the bodies. Proved on a few hundred
 * messages, small bodies beside large ones (the 10 000 × 256 KiB figure is bench/tools/dlq-memory.ts's).
 * Measured as the heap the listing keeps alive after a full collection: no clock, no machine speed.
 */
const MESSAGES = 120;
const SMALL = 1_024;
const LARGE = 200 * 1_024;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const { sqs } = awsClients();
const s3 = s3Client(stack().aws);
let small: BootstrappedResources;
let large: BootstrappedResources;

async function fill(queue: BootstrappedResources, bodyChars: number): Promise<void> {
  for (let start = 0; start < MESSAGES; start += 10) {
    await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        sqs.send(
          new SendMessageCommand({
            QueueUrl: queue.dlqUrl,
            // Each body its own string (a shared one would be counted once).
            MessageBody: `${start + index} ${"x".repeat(bodyChars)}`,
            MessageAttributes: {
              [EVENT_ID_ATTRIBUTE]: { DataType: "String", StringValue: `event-${start + index}` },
              [EVENT_TYPE_ATTRIBUTE]: { DataType: "String", StringValue: "photo.posted" },
              poison_reason: { DataType: "String", StringValue: `body_not_json: ${"r".repeat(bodyChars)}` },
            },
          }),
        ),
      ),
    );
  }
}

function queuesOf(queue: BootstrappedResources) {
  return {
    sqs,
    s3,
    queueUrl: queue.queueUrl,
    dlqUrl: queue.dlqUrl,
    requestTimeoutMs: 10_000,
    callTimeoutMs: 10_000,
    holdSeconds: 120,
    log: capturingLogger().log,
    close: () => {},
  };
}

/** The heap `list` leaves alive with what it resolves to (held until measured), in bytes. */
async function keptBy(list: () => Promise<unknown>): Promise<{ bytes: number; kept: unknown }> {
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = await list();
  gc();
  return { bytes: process.memoryUsage().heapUsed - before, kept };
}

beforeAll(async () => {
  const queue = (label: string) =>
    bootstrapResources(stack().aws, { name: uniqueName(label), fifo: false, rawDelivery: true });
  [small, large] = await Promise.all([queue("dlq-mem-small"), queue("dlq-mem-large")]);
  await fill(small, SMALL);
  await fill(large, LARGE);
}, 300_000);

afterAll(() => {
  sqs.destroy();
  s3.destroy();
});

const stopping = new AbortController().signal;
const LISTINGS = {
  "the console's listing (DeadLetterDesk)": (queue: BootstrappedResources) => () =>
    new DeadLetterDesk(queuesOf(queue), stopping).listing(),
  // What `consumer dlq list` keeps (keptDeadLetter, the consumer's own code), through the same walk.
  "consumer dlq list's walk (keptDeadLetter)": (queue: BootstrappedResources) => () =>
    walkDeadLetters(queuesOf(queue), stopping, (message) => keptDeadLetter(message)),
};

describe("a DLQ listing's memory", { timeout: 120_000 }, () => {
  for (const [name, listingOf] of Object.entries(LISTINGS)) {
    it(`${name}: what it keeps does not grow with the bodies`, async () => {
      // Once unmeasured: the SDK's first call sets up what it keeps for every later one.
      await listingOf(small)();
      const ofSmall = await keptBy(listingOf(small));
      const ofLarge = await keptBy(listingOf(large));
      const listed = JSON.stringify(ofLarge.kept);
      expect(listed).toContain("event-119");
      // Each letter as kept: a few thousand characters at most, whatever its message carries.
      expect(listed.length / MESSAGES).toBeLessThan(8_000);
      // 120 messages of 200 KiB more bodies and reasons (some 48 MiB as received): the listing keeps
      // a fifth of one body more per message at most (noise); whole bodies kept would be 400 KiB each.
      const grownPerMessage = (ofLarge.bytes - ofSmall.bytes) / MESSAGES;
      expect(grownPerMessage).toBeLessThan(40 * 1_024);
    });
  }

  it("a walk keeps what it is told to at most, and counts every message it received", async () => {
    const walk = await walkDeadLetters(queuesOf(small), stopping, (message) => message.MessageId, 7);
    expect({ kept: walk.kept.length, received: walk.received, complete: walk.complete }).toEqual({
      kept: 7,
      received: MESSAGES,
      complete: true,
    });
  });
});
