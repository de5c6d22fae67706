import { randomUUID } from "node:crypto";
import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Deadline, DeadlineExceededError, defineHandlers } from "@outbox/client";
import { s3Client } from "@outbox/devstack";
import { type SilentServer, stack, startSilentServer, waitUntil } from "@outbox/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DecodedMessage } from "../src/decode-message.js";
import { DrainExpiredError, PoisonReason } from "../src/errors.js";
import { ClaimedPayloadTimeoutError, fetchClaimedPayload } from "../src/fetch-claimed-payload.js";
import { capturingLogger, queueFor, sendBody, useConsumerTestBed } from "./harness.js";

// The claim check's fetch against real servers: moto (or LocalStack) for the objects, and an S3
// endpoint that accepts connections and never answers (startSilentServer), for the bounds.

/** A client of the hung server whose own timeouts are far beyond the bounds under test. */
function hungClient(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    forcePathStyle: true,
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 60_000, requestTimeout: 60_000, throwOnRequestTimeout: true },
  });
}

const BUCKET = "claims";
const pointerBody = (bucket: string, key: string) =>
  `["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":"${bucket}","s3Key":"${key}"}]`;

function claimed(bucket: string, key: string): DecodedMessage {
  return {
    eventId: randomUUID(),
    eventType: "example.created",
    payload: JSON.parse(pointerBody(bucket, key)),
    headers: {},
    claimed: { bucket, key },
  };
}

let hung: SilentServer;
let hungS3: S3Client;

beforeAll(async () => {
  hung = await startSilentServer();
  hungS3 = hungClient(hung.endpoint);
});

afterAll(async () => {
  hungS3.destroy();
  await hung.stop();
});

describe("fetchClaimedPayload", () => {
  it("puts the object's JSON in place of the pointer", async () => {
    const s3 = s3Client(stack().aws);
    const bucket = stack().claimCheckBucket ?? "";
    const key = `fetch/${randomUUID()}`;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: '{"name":"big"}' }));
    const deadline = Deadline.after(10_000);
    try {
      const fetched = await fetchClaimedPayload(
        { s3, bucket, fetchTimeoutMs: 5_000 },
        claimed(bucket, key),
        deadline,
      );
      expect(fetched).toMatchObject({ payload: { name: "big" }, claimed: { bucket, key } });
    } finally {
      deadline.dispose();
      s3.destroy();
    }
  });

  it("stops a hung GetObject at the message's deadline, with the deadline's own error, and closes its connection", async () => {
    const before = hung.opened();
    const deadline = Deadline.after(300);
    try {
      const fetching = fetchClaimedPayload(
        { s3: hungS3, bucket: BUCKET, fetchTimeoutMs: 60_000 },
        claimed(BUCKET, "hung/1"),
        deadline,
      );
      await expect(fetching).rejects.toBeInstanceOf(DeadlineExceededError);
    } finally {
      deadline.dispose();
    }
    expect(hung.opened()).toBeGreaterThan(before);
    await waitUntil("the aborted request's connection to close", () => hung.closed() >= hung.opened(), {
      timeoutMs: 5_000,
    });
  });

  it("stops it at CONSUMER_CLAIM_CHECK_FETCH_TIMEOUT_MS when that comes first, naming the setting", async () => {
    const deadline = Deadline.after(60_000);
    try {
      const fetching = fetchClaimedPayload(
        { s3: hungS3, bucket: BUCKET, fetchTimeoutMs: 300 },
        claimed(BUCKET, "hung/2"),
        deadline,
      );
      await expect(fetching).rejects.toBeInstanceOf(ClaimedPayloadTimeoutError);
      await expect(fetching).rejects.toThrow(
        `GetObject s3://${BUCKET}/hung/2 did not finish within CONSUMER_CLAIM_CHECK_FETCH_TIMEOUT_MS (300 ms)`,
      );
    } finally {
      deadline.dispose();
    }
  });

  it("ends with the drain's DrainExpiredError when the drain expires mid-fetch, so the message is released", async () => {
    const drain = new AbortController();
    const deadline = Deadline.after(60_000, drain.signal);
    const before = hung.opened();
    try {
      const fetching = fetchClaimedPayload(
        { s3: hungS3, bucket: BUCKET, fetchTimeoutMs: 60_000 },
        claimed(BUCKET, "hung/3"),
        deadline,
      );
      await waitUntil("the GetObject to reach the server", () => hung.opened() > before, {
        timeoutMs: 5_000,
      });
      drain.abort(new DrainExpiredError("drain timed out"));
      await expect(fetching).rejects.toBeInstanceOf(DrainExpiredError);
    } finally {
      deadline.dispose();
    }
  });

  it("calls a pointer poison when no bucket is configured or it names another, without a request", async () => {
    const deadline = Deadline.after(10_000);
    const before = hung.opened();
    try {
      const unconfigured = await fetchClaimedPayload(undefined, claimed(BUCKET, "k"), deadline);
      expect(String(unconfigured)).toBe(
        "claim_check_not_configured: the payload is at s3://claims/k and CONSUMER_CLAIM_CHECK_BUCKET is not set",
      );
      const foreign = await fetchClaimedPayload(
        { s3: hungS3, bucket: BUCKET, fetchTimeoutMs: 1_000 },
        claimed("elsewhere", "k"),
        deadline,
      );
      expect(foreign).toBeInstanceOf(PoisonReason);
      expect(String(foreign)).toBe(
        "claim_check_bucket_not_allowed: the payload is at s3://elsewhere/k, outside CONSUMER_CLAIM_CHECK_BUCKET (claims)",
      );
    } finally {
      deadline.dispose();
    }
    expect(hung.opened()).toBe(before);
  });
});

describe("the consumer with a hung S3", () => {
  const bed = useConsumerTestBed("claim_hung");

  it("fails the message at its deadline and retries it later; the handler never runs", async () => {
    const queue = await queueFor("claim-hung");
    let handled = 0;
    const { lines, log } = capturingLogger();
    const consumer = bed.consumer(queue, {
      handlers: defineHandlers({
        "example.created": async () => {
          handled += 1;
        },
      }),
      claimCheck: { s3: hungS3, bucket: BUCKET },
      handlerTimeoutMs: 500,
      claimCheckFetchTimeoutMs: 60_000,
      retryBaseSeconds: 30,
      waitTimeSeconds: 1,
      log,
    });
    await sendBody(bed.sqs, queue.queueUrl, pointerBody(BUCKET, "hung/consumer"), {
      event_id: { DataType: "String", StringValue: randomUUID() },
      event_type: { DataType: "String", StringValue: "example.created" },
      ExtendedPayloadSize: { DataType: "Number", StringValue: "300000" },
    });
    consumer.start();
    await waitUntil("the message to fail", () => consumer.stats().failed > 0, { timeoutMs: 10_000 });
    expect(await consumer.drain()).toMatchObject({ clean: true, processed: 0, failed: 1, poison: 0 });
    expect(handled).toBe(0);
    const retried = lines
      .map((line) => JSON.parse(line))
      .find((line) => line.msg === "message failed; retrying later");
    expect(retried?.err?.type).toBe("DeadlineExceededError");
  });
});
