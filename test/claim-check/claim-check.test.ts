import { randomUUID } from "node:crypto";
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import type { SNSClient } from "@aws-sdk/client-sns";
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from "@aws-sdk/client-sqs";
import {
  type ConsumedEvent,
  defineHandlers,
  enqueue,
  type NewEvent,
  type OutboxTables,
  OutboxValidationError,
} from "@outbox/client";
import { ClaimCheckError, S3ClaimCheck } from "@outbox/client/claim-check";
import { type Consumer, createConsumer } from "@outbox/consumer";
import { type BootstrappedResources, bootstrapResources, s3Client } from "@outbox/devstack";
import { createRelay, createSnsPublisher } from "@outbox/relay";
import { createLogger, type DatabaseHandle } from "@outbox/shared";
import {
  awsClients,
  createMigratedTestDatabase,
  drainQueue,
  stack,
  startSilentServer,
  uniqueName,
  waitUntil,
} from "@outbox/test-kit";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The claim check end to end on the run's stack: enqueue puts the payload in S3 (moto, or
// LocalStack's S3) inside the transaction, the real relay publishes the pointer as an ordinary small
// message, SQS delivers it raw, and the consumer fetches the object before the handler runs.

const FIVE_MIB = 5 * 1024 * 1024;
const POINTER_CLASS = "software.amazon.payloadoffloading.PayloadS3Pointer";
const eventType = "blob.stored";

let database: DatabaseHandle;
let databaseUrl: string;
let sns: SNSClient;
let sqs: SQSClient;
let s3: S3Client;
let bucket: string;
let resources: BootstrappedResources;
let claimCheck: S3ClaimCheck;

beforeAll(async () => {
  ({ sns, sqs } = awsClients());
  s3 = s3Client(stack().aws);
  const named = stack().claimCheckBucket;
  if (named === undefined) throw new Error("the stack created no claim-check bucket");
  bucket = named;
  claimCheck = new S3ClaimCheck({ s3, bucket, keyPrefix: "test/", putTimeoutMs: 30_000 });
  ({ url: databaseUrl, handle: database } = await createMigratedTestDatabase("claim_check", {
    service: "claim-check-test",
    poolMax: 10,
  }));
  resources = await bootstrapResources(stack().aws, { name: uniqueName("claim"), rawDelivery: true });
});

afterAll(async () => {
  sns.destroy();
  sqs.destroy();
  s3.destroy();
  await database.close(5_000);
});

const quiet = () => createLogger({ service: "claim-check-test", version: "0", level: "silent" });

/** A JSON payload of exactly `bytes` bytes, unique to this call. */
function payloadOf(bytes: number): { json: string; payload: { id: string; blob: string } } {
  const id = randomUUID();
  const overhead = Buffer.byteLength(JSON.stringify({ id, blob: "" }));
  const payload = { id, blob: "x".repeat(bytes - overhead) };
  const json = JSON.stringify(payload);
  expect(Buffer.byteLength(json)).toBe(bytes);
  return { json, payload };
}

/** A fresh UUID after the prefix: how AWS's extended clients key an object (`s3KeyPrefix + UUID`). */
const UUID_KEY_TAIL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUID_KEY = new RegExp(`^test/${UUID_KEY_TAIL.source.slice(1)}`);

/** The object key the event's row points at. */
async function keyOf(id: string): Promise<string> {
  const row = await database.db
    .selectFrom("outbox")
    .select("payload")
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  const [, pointer] = row.payload as [string, { s3Key: string }];
  return pointer.s3Key;
}

/**
 * What AWS's Java SQS extended client does on receive, with its default `cleanupS3Payload = true`:
 * for each message with the `ExtendedPayloadSize` marker, GetObject at the pointer (a NoSuchKey
 * throws, failing the whole receive), process, DeleteMessage, then DeleteObject.
 */
async function receiveDeletingPayloads(queueUrl: string, count: number): Promise<string[]> {
  const payloads: string[] = [];
  await waitUntil(`${count} messages through a payload-deleting consumer`, async () => {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MessageAttributeNames: ["All"],
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
      }),
    );
    for (const message of Messages as Message[]) {
      if (message.MessageAttributes?.ExtendedPayloadSize === undefined) continue;
      const [, pointer] = JSON.parse(message.Body ?? "") as [string, { s3BucketName: string; s3Key: string }];
      const object = await s3.send(
        new GetObjectCommand({ Bucket: pointer.s3BucketName, Key: pointer.s3Key }),
      );
      payloads.push((await object.Body?.transformToString("utf-8")) ?? "");
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
      await s3.send(new DeleteObjectCommand({ Bucket: pointer.s3BucketName, Key: pointer.s3Key }));
    }
    return payloads.length >= count;
  });
  return payloads;
}

async function enqueueClaimed(
  event: NewEvent,
  maxMessageBytes?: Readonly<Record<string, number>>,
): Promise<string> {
  const options = maxMessageBytes === undefined ? { claimCheck } : { claimCheck, maxMessageBytes };
  const [id] = await database.db
    .transaction()
    .execute((trx) => enqueue(trx as unknown as Kysely<OutboxTables>, [event], options));
  if (id === undefined) throw new Error("enqueue returned no id");
  return id;
}

/** Publishes everything in the outbox with the real relay, then drains it. */
async function relayAll(to: BootstrappedResources = resources): Promise<void> {
  const relay = createRelay({
    db: database.db,
    publisher: createSnsPublisher(sns),
    listenUrl: databaseUrl,
    topicArns: { blobs: to.topicArn },
    backoff: { baseMs: 50, maxMs: 200 },
    outageBackoffMaxMs: 200,
  });
  relay.start();
  await waitUntil("the outbox to be published", async () => {
    const unsent = await database.db
      .selectFrom("outbox")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("published_at", "is", null)
      .executeTakeFirstOrThrow();
    return Number(unsent.n) === 0;
  });
  await relay.drain();
}

function consumerOf(handled: ConsumedEvent[], from: BootstrappedResources = resources): Consumer {
  return createConsumer({
    handlers: defineHandlers<{ [eventType]: unknown }>({
      [eventType]: async (event) => {
        handled.push(event);
      },
    }),
    pool: database.pool,
    sqs,
    queueUrl: from.queueUrl,
    dlqUrl: from.dlqUrl,
    claimCheck: { s3, bucket },
    waitTimeSeconds: 1,
    log: quiet(),
  });
}

describe("the S3 claim check", () => {
  it("leaves a 900 KiB payload on a topic raised to 1 MiB as it is: no object, the message is the payload, handled once", async () => {
    const large = await bootstrapResources(stack().aws, {
      name: uniqueName("claim-large"),
      rawDelivery: true,
      maximumMessageSize: 1_048_576,
    });
    const { json } = payloadOf(900 * 1024);
    const id = await enqueueClaimed({ topic: "blobs", eventType, payloadJson: json }, { blobs: 1_048_576 });
    const row = await database.db
      .selectFrom("outbox")
      .select(["payload", "headers"])
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row.payload) === json).toBe(true);
    expect(row.headers).not.toHaveProperty("ExtendedPayloadSize");

    await relayAll(large);
    const handled: ConsumedEvent[] = [];
    const consumer = consumerOf(handled, large);
    consumer.start();
    await waitUntil("the 900 KiB event to be handled", () => handled.length > 0, { timeoutMs: 30_000 });
    expect(await consumer.drain()).toMatchObject({ clean: true, processed: 1, poison: 0, failed: 0 });
    expect(handled.map((event) => event.id)).toEqual([id]);
    expect(JSON.stringify(handled[0]?.payload) === json).toBe(true);
    const inbox = await database.db
      .selectFrom("inbox")
      .select("event_id")
      .where("event_id", "=", id)
      .execute();
    expect(inbox).toHaveLength(1);
  });

  it("offloads a 5 MiB payload: the object holds its exact bytes, SQS carries the extended clients' pointer and ExtendedPayloadSize", async () => {
    const { json } = payloadOf(FIVE_MIB);
    const id = await enqueueClaimed({ topic: "blobs", eventType, payloadJson: json });

    // The row holds the pointer, not the payload: the relay sends it as it sends any small message.
    const row = await database.db
      .selectFrom("outbox")
      .select(["payload", "headers"])
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    const key = await keyOf(id);
    expect(key).toMatch(UUID_KEY);
    const pointer = `["${POINTER_CLASS}",{"s3BucketName":"${bucket}","s3Key":"${key}"}]`;
    expect(JSON.stringify(row.payload)).toBe(pointer);
    const stored = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    expect((await stored.Body?.transformToString("utf-8")) === json).toBe(true);

    await relayAll();
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: resources.queueUrl,
        MessageAttributeNames: ["All"],
        WaitTimeSeconds: 5,
        VisibilityTimeout: 60,
      }),
    );
    expect(Messages).toHaveLength(1);
    const [message] = Messages;
    expect(message?.Body).toBe(pointer);
    expect(message?.MessageAttributes?.ExtendedPayloadSize).toEqual({
      DataType: "String",
      StringValue: String(FIVE_MIB),
    });
    expect(message?.MessageAttributes?.event_id?.StringValue).toBe(id);
    // Visible again at once, for the consumer below.
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: resources.queueUrl,
        ReceiptHandle: message?.ReceiptHandle ?? "",
        VisibilityTimeout: 0,
      }),
    );

    // The consumer: handled once, with the payload as enqueued, byte for byte.
    const handled: ConsumedEvent[] = [];
    const consumer = consumerOf(handled);
    consumer.start();
    await waitUntil("the claim-checked event to be handled", () => handled.length > 0, { timeoutMs: 30_000 });
    const summary = await consumer.drain();
    expect(summary).toMatchObject({ clean: true, processed: 1, poison: 0, failed: 0 });
    expect(handled).toHaveLength(1);
    expect(handled[0]?.id).toBe(id);
    expect(JSON.stringify(handled[0]?.payload) === json).toBe(true);
    // The size marker is the transport's, not one of the event's headers.
    expect(handled[0]?.headers).not.toHaveProperty("ExtendedPayloadSize");
    const inbox = await database.db
      .selectFrom("inbox")
      .select("event_id")
      .where("event_id", "=", id)
      .execute();
    expect(inbox).toHaveLength(1);
  });

  it("sends a message whose object was deleted to the DLQ, its poison reason naming the object; no handler runs", async () => {
    const { json } = payloadOf(300 * 1024);
    const id = await enqueueClaimed({ topic: "blobs", eventType, payloadJson: json });
    await relayAll();
    const key = await keyOf(id);
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));

    const handled: ConsumedEvent[] = [];
    const consumer = consumerOf(handled);
    consumer.start();
    await waitUntil("the poison message to be quarantined", () => consumer.stats().poison > 0, {
      timeoutMs: 30_000,
    });
    expect(await consumer.drain()).toMatchObject({ clean: true, processed: 0, poison: 1 });
    expect(handled).toHaveLength(0);

    const dead = await drainQueue(sqs, resources.dlqUrl);
    expect(dead).toHaveLength(1);
    expect(dead[0]?.attributes.event_id).toBe(id);
    expect(dead[0]?.attributes.poison_reason).toBe(
      `claimed_payload_missing: no object at s3://${bucket}/${key} (NoSuchKey)`,
    );
    // The evidence kept: the pointer and its size marker travel to the DLQ with the message.
    expect(dead[0]?.body).toContain(key);
    expect(dead[0]?.attributes.ExtendedPayloadSize).toBe(String(Buffer.byteLength(json)));
  });

  it("lets a consumer that deletes each object after processing (AWS's Java client's default) read two events with the same payload", async () => {
    const { json } = payloadOf(300 * 1024);
    const event = { topic: "blobs", eventType, payloadJson: json };
    const ids = await database.db
      .transaction()
      .execute((trx) => enqueue(trx as unknown as Kysely<OutboxTables>, [event, event], { claimCheck }));
    await relayAll();
    const payloads = await receiveDeletingPayloads(resources.queueUrl, 2);
    expect(payloads.map((text) => text === json)).toEqual([true, true]);
    // Both objects gone after processing, as the deleting consumer leaves them.
    for (const id of ids) {
      const key = await keyOf(id);
      await expect(s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).rejects.toMatchObject({
        name: "NoSuchKey",
      });
    }
  });
});

describe("enqueue with a claim check", () => {
  async function outboxCount(): Promise<number> {
    const { n } = await database.db
      .selectFrom("outbox")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .executeTakeFirstOrThrow();
    return Number(n);
  }

  it("leaves a payload that fits in the message, and stores nothing", async () => {
    const prefix = `small-${randomUUID()}/`;
    const small = new S3ClaimCheck({ s3, bucket, keyPrefix: prefix });
    const [id] = await enqueue(database.db, [{ topic: "blobs", eventType, payload: { n: 1 } }], {
      claimCheck: small,
    });
    const row = await database.db
      .selectFrom("outbox")
      .select(["payload", "headers"])
      .where("id", "=", id ?? "")
      .executeTakeFirstOrThrow();
    expect(row.payload).toEqual({ n: 1 });
    expect(row.headers).not.toHaveProperty("ExtendedPayloadSize");
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    expect(listed.KeyCount ?? 0).toBe(0);
  });

  it("stores each event's payload in an object of its own, under a fresh UUID, even when payloads are equal", async () => {
    const prefix = `shared-${randomUUID()}/`;
    const shared = new S3ClaimCheck({ s3, bucket, keyPrefix: prefix });
    const { json } = payloadOf(300 * 1024);
    const event = { topic: "blobs", eventType, payloadJson: json };
    const ids = await enqueue(database.db, [event, event], { claimCheck: shared });
    const keys = await Promise.all(ids.map(keyOf));
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    expect(listed.Contents?.map((object) => object.Key).sort()).toEqual([...keys].sort());
    expect(new Set(keys).size).toBe(2);
    for (const key of keys) expect(key.slice(prefix.length)).toMatch(UUID_KEY_TAIL);
    expect(listed.Contents?.map((object) => object.Size)).toEqual([
      Buffer.byteLength(json),
      Buffer.byteLength(json),
    ]);
  });

  it("fails within putTimeoutMs on a hung S3, with a ClaimCheckError naming the object, and writes no row", async () => {
    const silent = await startSilentServer();
    const hungS3 = new S3Client({
      endpoint: silent.endpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
      forcePathStyle: true,
      maxAttempts: 1,
      requestHandler: { requestTimeout: 60_000, throwOnRequestTimeout: true },
    });
    try {
      const hung = new S3ClaimCheck({ s3: hungS3, bucket, putTimeoutMs: 300 });
      const { json } = payloadOf(300 * 1024);
      const before = await outboxCount();
      const attempt = database.db.transaction().execute((trx) =>
        enqueue(trx as unknown as Kysely<OutboxTables>, [{ topic: "blobs", eventType, payloadJson: json }], {
          claimCheck: hung,
        }),
      );
      await expect(attempt).rejects.toBeInstanceOf(ClaimCheckError);
      await expect(attempt).rejects.toThrow(
        new RegExp(
          `^PutObject s3://${bucket}/${UUID_KEY_TAIL.source.slice(1, -1)} did not finish within 300 ms$`,
        ),
      );
      expect(await outboxCount()).toBe(before);
    } finally {
      hungS3.destroy();
      await silent.stop();
    }
  });

  it("refuses a header named like the extended clients' marker, with or without a claim check", async () => {
    for (const name of ["ExtendedPayloadSize", "SQSLargePayloadSize"]) {
      const attempt = enqueue(
        database.db,
        [{ topic: "blobs", eventType, payload: {}, headers: { [name]: "10" } }],
        { claimCheck },
      );
      await expect(attempt).rejects.toBeInstanceOf(OutboxValidationError);
      await expect(attempt).rejects.toThrow(
        `event #0: header name "${name}" is reserved: it marks a claim-checked message`,
      );
    }
  });
});
