import { randomUUID } from "node:crypto";
import { S3ClaimCheck } from "@outbox/client/claim-check";
import { awsEnvironment, s3Client } from "@outbox/devstack";
import { hangLimit, receiveAll, runEntryPoint, stack } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, describe, expect, it, vi } from "vitest";
import { clearOutbox, useRelayTestBed } from "./harness.js";

// Its tests start up to 2 programs one after another: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 2 }) });

// A claim-checked event's pointer is sent only while its object is sure to outlive the message:
// within RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS of its row's creation (the object is put in the row's
// own transaction). The rows here are written as `enqueue` writes a claim-checked event (the pointer
// as payload, the ExtendedPayloadSize header), then aged by moving `created_at` back. A republish
// also asks S3 whether the object is still there, so its rows get their objects in the stack's bucket.

const bed = useRelayTestBed("claim_age");
const RELAY_MAIN = "apps/relay/src/main.ts";
const s3 = s3Client(stack().aws);
const bucket = stack().claimCheckBucket ?? "claims";
const objects = new S3ClaimCheck({ s3, bucket, putTimeoutMs: 30_000 });
afterAll(() => s3.destroy());

const pointer = (key: string) =>
  JSON.stringify([
    "software.amazon.payloadoffloading.PayloadS3Pointer",
    { s3BucketName: bucket, s3Key: key },
  ]);

/**
 * A claim-checked row (or a plain one) `ageHours` old, dead when `dead`, its object put when
 * `stored` (else it is gone, as after a consumer deleted it); its id, which is its object's key.
 */
async function claimedRow(ageHours: number, dead = false, claimed = true, stored = false): Promise<string> {
  const id = randomUUID();
  if (stored) await objects.put({ bucket, key: id }, JSON.stringify({ blob: "x".repeat(300) }));
  await sql`
    INSERT INTO outbox (id, topic, event_type, payload, headers, created_at, dead_at)
    VALUES (${id}::uuid, 'orders', 'blob.stored', ${pointer(id)}::json,
            ${JSON.stringify(claimed ? { ExtendedPayloadSize: "300000" } : {})}::jsonb,
            now() - ${ageHours} * interval '1 hour', ${dead ? sql`now()` : sql`NULL`})
  `.execute(bed.handle.db);
  return id;
}

/** `relay republish` of the last hour's `orders` rows; S3 where the stack has it unless `env` says otherwise. */
function republish(env: Record<string, string> = {}) {
  const from = new Date(Date.now() - 3_600_000).toISOString();
  return runEntryPoint(
    RELAY_MAIN,
    ["republish", "--from", from, "--topic", "orders", "--inbox-retention-hours", "336"],
    {
      ...awsEnvironment(stack().aws),
      DATABASE_URL: bed.url,
      RELAY_TOPIC_ARNS: `orders=${bed.standard.topicArn}`,
      ...env,
    },
  );
}

/** The JSON log lines of a run's stderr with this message. */
function logLines(stderr: string, msg: string): Record<string, unknown>[] {
  return stderr
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === msg);
}

async function stateOf(
  id: string,
): Promise<{ published: boolean; dead: boolean; last_error: string | null }> {
  const { rows } = await sql<{ published: boolean; dead: boolean; last_error: string | null }>`
    SELECT published_at IS NOT NULL AS published, dead_at IS NOT NULL AS dead, last_error
    FROM outbox WHERE id = ${id}::uuid
  `.execute(bed.handle.db);
  return rows[0] ?? { published: false, dead: false, last_error: "no row" };
}

describe("claim-checked events past RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS", () => {
  it("the relay sends a fresh one and kills an old one at once, naming why; a plain old event goes out", async () => {
    await clearOutbox(bed.handle);
    const fresh = await claimedRow(1);
    const old = await claimedRow(193);
    const plain = await claimedRow(300, false, false);
    const relay = bed.start();
    await expect
      .poll(
        async () => [
          (await stateOf(fresh)).published,
          (await stateOf(old)).dead,
          (await stateOf(plain)).published,
        ],
        { timeout: 20_000 },
      )
      .toEqual([true, true, true]);
    await bed.stop(relay);
    const dead = await stateOf(old);
    expect(dead.published).toBe(false);
    expect(dead.last_error).toBe(
      "claim-checked event 193 h old, over RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS (192 h): its object may expire before the message is read; enqueue it again",
    );
    const received = await receiveAll(bed.sqs, bed.standard.queueUrl, 2);
    expect(received.map((message) => message.attributes.event_id).sort()).toEqual([fresh, plain].sort());
  });

  it("requeue-dead leaves an old claim-checked row dead, naming it on stderr, and requeues the rest", async () => {
    await clearOutbox(bed.handle);
    const old = await claimedRow(200, true);
    const young = await claimedRow(2, true);
    const run = await runEntryPoint(RELAY_MAIN, ["requeue-dead"], { DATABASE_URL: bed.url });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ requeued: 1 });
    expect(run.stderr).toContain(
      `relay requeue-dead: 1 claim-checked events left dead: older than RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS (192 h), their objects may expire before a message is read; enqueue them again: ${old}\n`,
    );
    expect((await stateOf(old)).dead).toBe(true);
    expect((await stateOf(young)).dead).toBe(false);
    // Named alone, it is not requeued: exit 1, as for an id that names no dead row.
    const one = await runEntryPoint(RELAY_MAIN, ["requeue-dead", "--id", old], { DATABASE_URL: bed.url });
    expect({ code: one.code, stdout: one.stdout.trim() }).toEqual({ code: 1, stdout: '{"requeued":0}' });
  });

  it("republish skips an old claim-checked row, counting and logging it, and sends a young one", async () => {
    await clearOutbox(bed.handle);
    const old = await claimedRow(200);
    const young = await claimedRow(2, false, true, true);
    await sql`UPDATE outbox SET published_at = now() - interval '1 minute'`.execute(bed.handle.db);
    const run = await republish();
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ sent: 1, skipped: 1, finished: true });
    const skipped = logLines(run.stderr, "republish: event skipped, it cannot be sent");
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({ eventId: old });
    expect(String(skipped[0]?.reason)).toMatch(
      /^claim-checked event 200 h old, over RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS/,
    );
    const received = await receiveAll(bed.sqs, bed.standard.queueUrl, 1);
    expect(received.map((message) => message.attributes.event_id)).toEqual([young]);
  });

  it("republish skips a claim-checked event whose object is gone, naming it, and sends the others", async () => {
    await clearOutbox(bed.handle);
    const first = await claimedRow(2, false, true, true);
    const gone = await claimedRow(2);
    const plain = await claimedRow(2, false, false);
    const last = await claimedRow(2, false, true, true);
    await sql`UPDATE outbox SET published_at = now() - interval '1 minute'`.execute(bed.handle.db);
    const run = await republish();
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ sent: 3, skipped: 1, failed: 0, finished: true });
    const skipped = logLines(run.stderr, "republish: event skipped, it cannot be sent");
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({
      eventId: gone,
      reason: `claim-checked event whose object s3://${bucket}/${gone} is gone (deleted, or expired): its pointer would reach consumers without a payload; enqueue it again`,
    });
    const received = await receiveAll(bed.sqs, bed.standard.queueUrl, 3);
    expect(received.map((message) => message.attributes.event_id).sort()).toEqual(
      [first, plain, last].sort(),
    );
  });

  it("republish stops, resumable, when S3 cannot say whether an object is there", async () => {
    await clearOutbox(bed.handle);
    await claimedRow(2, false, true, true);
    await sql`UPDATE outbox SET published_at = now() - interval '1 minute'`.execute(bed.handle.db);
    // Nothing listens on port 9 of 127.0.0.1: every HeadObject is refused, as in an S3 outage.
    const run = await republish({ AWS_ENDPOINT_URL_S3: "http://127.0.0.1:9", AWS_MAX_ATTEMPTS: "1" });
    expect(run.code, run.stderr).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ sent: 0, skipped: 0, finished: false });
    expect(
      logLines(
        run.stderr,
        "republish: S3 did not say whether the event's object is there; stopped before this page, resume to send it again",
      ),
    ).toHaveLength(1);
    const { rows } = await sql<{ cursor_seq: string | null }>`
      SELECT cursor_seq::text AS cursor_seq FROM relay_republish WHERE id = ${JSON.parse(run.stdout).run}::uuid
    `.execute(bed.handle.db);
    expect(rows).toEqual([{ cursor_seq: null }]);
  });
});
