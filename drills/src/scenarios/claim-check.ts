import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { DeleteObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { enqueue } from "@outbox/client";
import { S3ClaimCheck } from "@outbox/client/claim-check";
import { s3Client, sqsClient } from "@outbox/devstack";
import type { ExampleEffectsTable } from "@outbox/example-handlers";
import { DaemonFleet, drainQueue, waitUntil } from "@outbox/test-kit/process";
import { checkClaimCheck } from "../checks.js";
import { consumerEnv, DRILL_TOPIC, relayEnv } from "../daemons.js";
import type { DrillContext } from "../drill-context.js";
import { prepareDrillEnvironment } from "../drill-environment.js";
import type { ScenarioResult } from "../report.js";

const LARGE_BYTES = 5 * 1024 * 1024;
const DELETED_BYTES = 300 * 1024;
const WAIT_MS = 60_000;

/**
 * A JSON payload of exactly `bytes` bytes, `{"id":…,"blob":…}`: keys in the order jsonb keeps them
 * (shorter first), so the effect's stored payload prints back as the same text.
 */
function payloadOf(bytes: number): string {
  const id = randomUUID();
  const overhead = Buffer.byteLength(JSON.stringify({ id, blob: "" }));
  return JSON.stringify({ id, blob: "x".repeat(bytes - overhead) });
}

/**
 * The S3 claim check end to end with both daemons as real processes: a 5 MiB event (20 times SNS's
 * limit) is enqueued with `S3ClaimCheck`, published by the relay as a pointer, and handled once by
 * the consumer with the payload fetched back byte for byte; a second event's object is deleted
 * before the consumer runs, and that message must land in the DLQ with a reason naming the object.
 */
export async function runClaimCheckDrill(context: DrillContext): Promise<ScenarioResult[]> {
  const started = performance.now();
  const { stack, progress } = context;
  const bucket = stack.claimCheckBucket;
  if (bucket === undefined || stack.aws.s3Endpoint === undefined) {
    throw new Error("the claim-check drill needs the stack's S3 (a stack started by this version)");
  }
  const environment = await prepareDrillEnvironment(context, { label: "claim_check" });
  const s3: S3Client = s3Client(stack.aws);
  const fleet = new DaemonFleet();
  try {
    const claimCheck = new S3ClaimCheck({ s3, bucket, keyPrefix: "drill/" });
    const large = payloadOf(LARGE_BYTES);
    const doomed = payloadOf(DELETED_BYTES);
    const [largeId, doomedId] = await environment.database.db.transaction().execute((trx) =>
      enqueue(
        trx,
        [
          { topic: DRILL_TOPIC, eventType: "example.created", payloadJson: large },
          { topic: DRILL_TOPIC, eventType: "example.created", payloadJson: doomed },
        ],
        { claimCheck },
      ),
    );
    const doomedRow = await environment.database.db
      .selectFrom("outbox")
      .select("payload")
      .where("id", "=", doomedId ?? "")
      .executeTakeFirstOrThrow();
    const [, doomedPointer] = doomedRow.payload as [string, { s3Key: string }];
    const deletedKey = doomedPointer.s3Key;
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: deletedKey }));
    progress(
      `enqueued ${LARGE_BYTES} + ${DELETED_BYTES} bytes through the claim check; deleted ${deletedKey}`,
    );
    const [row] = await environment.database.db
      .selectFrom("outbox")
      .select("payload")
      .where("id", "=", largeId ?? "")
      .execute();

    const relay = fleet.relay("relay", relayEnv(environment));
    const consumer = fleet.consumer(
      "consumer",
      consumerEnv(environment, { DRILL_HANDLER_MS: "5", CONSUMER_CLAIM_CHECK_BUCKET: bucket }),
    );
    await Promise.all([relay.waitForLog("started"), consumer.waitForLog("started")]);
    const effectsOf = (id: string) =>
      environment.database.db
        .withTables<{ example_effects: ExampleEffectsTable }>()
        .selectFrom("example_effects")
        .select("payload")
        .where("event_id", "=", id)
        .execute();
    await waitUntil("the large event's effect", async () => (await effectsOf(largeId ?? "")).length > 0, {
      timeoutMs: WAIT_MS,
      alive: [relay, consumer],
    });
    await waitUntil(
      "the deleted object's event to be quarantined",
      () => consumer.lines.some((line) => line.msg === "poison message"),
      { timeoutMs: WAIT_MS, alive: [relay, consumer] },
    );
    relay.child.kill("SIGTERM");
    consumer.child.kill("SIGTERM");
    const exits = await Promise.all([relay.exited, consumer.exited]);
    const sqs = sqsClient(stack.aws);
    const dead = await drainQueue(sqs, environment.resources.dlqUrl).finally(() => sqs.destroy());
    const effects = await effectsOf(largeId ?? "");
    const inbox = await environment.database.db
      .selectFrom("inbox")
      .select("event_id")
      .where("event_id", "=", largeId ?? "")
      .execute();
    const check = checkClaimCheck({
      payloadBytes: Buffer.byteLength(large),
      messageBytes: Buffer.byteLength(JSON.stringify(row?.payload)),
      inbox: inbox.length,
      effects: effects.length,
      exactBytes: effects.length === 1 && JSON.stringify(effects[0]?.payload) === large,
      deletedObjectReason:
        dead.find((message) => message.attributes.event_id === doomedId)?.attributes.poison_reason ?? null,
      deletedObject: `s3://${bucket}/${deletedKey}`,
      exits,
    });
    progress(`claim check: ${check.result}`);
    return [
      {
        scenario: "claim-check",
        checks: [check],
        figures: { payloadBytes: LARGE_BYTES, deletedKey, dlq: dead.length },
        durationMs: Math.round(performance.now() - started),
      },
    ];
  } finally {
    await fleet.killAll();
    s3.destroy();
    await environment.close();
  }
}
