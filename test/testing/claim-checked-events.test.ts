import { randomUUID } from "node:crypto";
import type { S3Client } from "@aws-sdk/client-s3";
import { type ConsumedEvent, defineHandlers, enqueue } from "@outbox/client";
import { S3ClaimCheck } from "@outbox/client/claim-check";
import { enqueuedEvents, outboxMark } from "@outbox/client/testing";
import { runHandlers } from "@outbox/consumer/testing";
import { s3Client } from "@outbox/devstack";
import type { DatabaseHandle } from "@outbox/shared";
import { createMigratedTestDatabase, stack } from "@outbox/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The test kit on a claim-checked event: what the outbox holds is the pointer; runHandlers fetches
// the payload with the consumer's own fetch when given the bucket, and says poison without it.

let database: DatabaseHandle;
let s3: S3Client;
let bucket: string;

beforeAll(async () => {
  s3 = s3Client(stack().aws);
  const named = stack().claimCheckBucket;
  if (named === undefined) throw new Error("the stack created no claim-check bucket");
  bucket = named;
  ({ handle: database } = await createMigratedTestDatabase("claim_checked_events", {
    service: "testing-test",
    poolMax: 4,
  }));
});
afterAll(async () => {
  s3.destroy();
  await database.close(5_000);
});

describe("a claim-checked event through the test kit", () => {
  it("reads back as its pointer, and reaches the handler whole through the bucket", async () => {
    const claimCheck = new S3ClaimCheck({ s3, bucket, keyPrefix: "testing/", putTimeoutMs: 30_000 });
    const payload = { id: randomUUID(), blob: "x".repeat(300_000) };
    const mark = await outboxMark(database.db);
    await enqueue(database.db, [{ topic: "blobs", eventType: "blob.stored", payload }], { claimCheck });

    const enqueued = await enqueuedEvents(database.db, { after: mark });
    expect(enqueued).toEqual([
      expect.objectContaining({
        type: "blob.stored",
        payload: [expect.any(String), expect.objectContaining({ s3BucketName: bucket })],
        headers: expect.objectContaining({ ExtendedPayloadSize: String(JSON.stringify(payload).length) }),
      }),
    ]);

    const seen: ConsumedEvent[] = [];
    const handlers = defineHandlers<{ "blob.stored": typeof payload }>({
      "blob.stored": async (event) => {
        seen.push(event);
      },
    });
    const withoutBucket = await runHandlers({ handlers, pool: database.pool, events: enqueued });
    const withBucket = await runHandlers({
      handlers,
      pool: database.pool,
      events: enqueued,
      claimCheck: { s3, bucket },
    });

    expect(withoutBucket).toEqual([
      expect.objectContaining({ outcome: "poison", reason: "claim_check_not_configured" }),
    ]);
    expect(withBucket.map((run) => run.outcome)).toEqual(["processed"]);
    expect(seen.map((event) => event.payload)).toEqual([payload]);
  });
});
