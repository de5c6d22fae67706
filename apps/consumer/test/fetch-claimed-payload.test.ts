import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Deadline, DeadlineExceededError, defineHandlers } from "@outbox/client";
import { s3Client } from "@outbox/devstack";
import {
  capturingLogger,
  hangLimit,
  runEntryPoint,
  type SilentServer,
  stack,
  startSilentServer,
  waitUntil,
} from "@outbox/test-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DrainExpiredError, PoisonReason } from "../src/errors.js";
import type { DecodedMessage } from "../src/message/decode.js";
import { ClaimedPayloadTimeoutError, fetchClaimedPayload } from "../src/message/fetch-claimed-payload.js";
import { readBoundedBody } from "../src/message/read-bounded-body.js";
import { queueFor, sendBody, useConsumerTestBed } from "./harness.js";

// Its tests start a program: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 1 }) });

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

function claimed(bucket: string, key: string, claimedBytes = 300_000): DecodedMessage {
  return {
    eventId: randomUUID(),
    eventType: "example.created",
    payload: JSON.parse(pointerBody(bucket, key)),
    headers: {},
    claimed: { bucket, key },
    claimedBytes,
  };
}

const MIB = 1024 * 1024;
const MAX_BYTES = 8 * MIB;

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
        { s3, bucket, fetchTimeoutMs: 5_000, maxPayloadBytes: MAX_BYTES },
        claimed(bucket, key, 14),
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
        { s3: hungS3, bucket: BUCKET, fetchTimeoutMs: 60_000, maxPayloadBytes: MAX_BYTES },
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
        { s3: hungS3, bucket: BUCKET, fetchTimeoutMs: 300, maxPayloadBytes: MAX_BYTES },
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
        { s3: hungS3, bucket: BUCKET, fetchTimeoutMs: 60_000, maxPayloadBytes: MAX_BYTES },
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
        { s3: hungS3, bucket: BUCKET, fetchTimeoutMs: 1_000, maxPayloadBytes: MAX_BYTES },
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

  it("calls a declared size over the maximum poison, naming both, without a request", async () => {
    const deadline = Deadline.after(10_000);
    const before = hung.opened();
    try {
      const refused = await fetchClaimedPayload(
        { s3: hungS3, bucket: BUCKET, fetchTimeoutMs: 1_000, maxPayloadBytes: MAX_BYTES },
        claimed(BUCKET, "k", 64 * MIB),
        deadline,
      );
      expect(String(refused)).toBe(
        `claimed_payload_too_large: s3://claims/k is declared 67108864 bytes (ExtendedPayloadSize), over CONSUMER_CLAIM_CHECK_MAX_BYTES (8388608)`,
      );
    } finally {
      deadline.dispose();
    }
    expect(hung.opened()).toBe(before);
  });

  it("calls an object smaller than its declared size poison, naming both", async () => {
    const s3 = s3Client(stack().aws);
    const bucket = stack().claimCheckBucket ?? "";
    const key = `fetch/${randomUUID()}`;
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: '{"name":"big"}' }));
    const deadline = Deadline.after(10_000);
    try {
      const refused = await fetchClaimedPayload(
        { s3, bucket, fetchTimeoutMs: 5_000, maxPayloadBytes: MAX_BYTES },
        claimed(bucket, key, 1_000),
        deadline,
      );
      expect(String(refused)).toBe(
        `claimed_payload_size_mismatch: s3://${bucket}/${key} is 14 bytes, its message declares 1000 (ExtendedPayloadSize)`,
      );
    } finally {
      deadline.dispose();
      s3.destroy();
    }
  });

  it("calls an object that is not JSON poison in the same words on every Node, without quoting it", async () => {
    const s3 = s3Client(stack().aws);
    const bucket = stack().claimCheckBucket ?? "";
    const reasons: string[] = [];
    const deadline = Deadline.after(10_000);
    try {
      // V8 quotes the first (`Unexpected token 'a', "alice@example.com" is not valid JSON`); Node 24's
      // adds "(line 1 column 29)" to the second's position.
      for (const body of ["alice@example.com", '{"email":"alice@example.com"']) {
        const key = `fetch/${randomUUID()}`;
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
        const refused = await fetchClaimedPayload(
          { s3, bucket, fetchTimeoutMs: 5_000, maxPayloadBytes: MAX_BYTES },
          claimed(bucket, key, body.length),
          deadline,
        );
        expect(refused).toBeInstanceOf(PoisonReason);
        reasons.push(String(refused).replace(key, "KEY"));
      }
      expect(reasons).toEqual([
        `claimed_payload_not_json: s3://${bucket}/KEY: not valid JSON`,
        `claimed_payload_not_json: s3://${bucket}/KEY: not valid JSON at position 28`,
      ]);
    } finally {
      deadline.dispose();
      s3.destroy();
    }
  });

  it("refuses a 64 MiB object declared as 1 000 bytes without reading it: poison naming both sizes, peak RSS growth far below the object", async () => {
    const s3 = s3Client(stack().aws);
    const bucket = stack().claimCheckBucket ?? "";
    const key = `fetch/huge-${randomUUID()}`;
    const warmKey = `fetch/warm-${randomUUID()}`;
    try {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: Buffer.alloc(64 * MIB, 0x20) }));
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: warmKey, Body: "{}" }));
    } finally {
      s3.destroy();
    }
    const run = await runEntryPoint("apps/consumer/test/fixtures/fetch-peak-rss.ts", [], {
      FETCH_AWS: JSON.stringify(stack().aws),
      FETCH_BUCKET: bucket,
      FETCH_KEY: key,
      FETCH_WARM_KEY: warmKey,
      FETCH_DECLARED_BYTES: "1000",
      FETCH_MAX_BYTES: String(MAX_BYTES),
    });
    expect(run.code, run.stderr).toBe(0);
    const measured = JSON.parse(run.stdout) as { outcome: string; peakGrowthBytes: number };
    expect(measured.outcome).toBe(
      `claimed_payload_size_mismatch: s3://${bucket}/${key} is 67108864 bytes, its message declares 1000 (ExtendedPayloadSize)`,
    );
    // Reading the object would take 64 MiB for its bytes and as much again for its text; refused
    // on its length, the fetch costs what a small one does.
    expect(measured.peakGrowthBytes).toBeLessThan(16 * MIB);
  });
});

describe("readBoundedBody", () => {
  /** A 64 MiB stream made on demand, a MiB at a time, counting how much of it was pulled. */
  function endless(): { body: Readable; pulled: () => number } {
    let pulled = 0;
    const body = Readable.from(
      (function* () {
        for (let i = 0; i < 64; i += 1) {
          pulled += MIB;
          yield Buffer.alloc(MIB, 0x20);
        }
      })(),
    );
    return { body, pulled: () => pulled };
  }

  it("stops reading one chunk past the bound, and says how far it got", async () => {
    const { body, pulled } = endless();
    const deadline = Deadline.after(10_000);
    try {
      const read = await readBoundedBody(body, 2 * MIB + 1, deadline);
      expect(read).toEqual({ over: true, readBytes: 3 * MIB });
    } finally {
      deadline.dispose();
    }
    expect(pulled()).toBeLessThanOrEqual(4 * MIB);
    expect(body.destroyed).toBe(true);
  });

  it("returns the whole body within the bound", async () => {
    const deadline = Deadline.after(10_000);
    try {
      const read = await readBoundedBody(
        Readable.from([Buffer.from('{"a":'), Buffer.from("1}")]),
        7,
        deadline,
      );
      expect(read).toEqual({ over: false, bytes: Buffer.from('{"a":1}') });
    } finally {
      deadline.dispose();
    }
  });
});

describe("the consumer with a hung S3", () => {
  const bed = useConsumerTestBed("claim_hung");

  it("fails the message at its deadline and retries it later; the handler never runs", async () => {
    const queue = await queueFor("claim-hung");
    let handled = 0;
    const { written: lines, log } = capturingLogger();
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
