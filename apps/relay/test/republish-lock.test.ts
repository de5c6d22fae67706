import { randomUUID } from "node:crypto";
import { awsEnvironment, s3Client } from "@outbox/devstack";
import { capturingLogger, runEntryPoint, stack } from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { workRepublish } from "../src/cli/republish.js";
import { createSnsPublisher } from "../src/index.js";
import { topicWithQueue, useRelayTestBed } from "./harness.js";

const bed = useRelayTestBed("republish_lock");
const s3 = s3Client(stack().aws);

afterAll(() => s3.destroy());

describe("a republish run that ends early", () => {
  it("lets go of its lock: a resume refused by the inbox retention leaves the run free at once", async () => {
    const topic = await topicWithQueue("republish-lock");
    // Three rows published 2 h ago, and a run over them not started yet.
    await sql`
      INSERT INTO outbox (id, topic, event_type, payload, published_at)
      SELECT gen_random_uuid(), 'orders', 'order.placed', '{}'::json, now() - interval '2 hours'
      FROM generate_series(1, 3)
    `.execute(bed.handle.db);
    const run = randomUUID();
    await sql`
      INSERT INTO relay_republish (id, from_published, to_published, rate)
      VALUES (${run}::uuid, now() - interval '3 hours', now(), 100)
    `.execute(bed.handle.db);
    const { log } = capturingLogger();
    const controller = new AbortController();
    // On a pooled connection, as the console works runs: it stays open after the run.
    const refused = await bed.handle.db.connection().execute((db) =>
      workRepublish(
        db,
        {
          publisher: createSnsPublisher(bed.sns),
          resolveTopic: () => topic.topicArn,
          publishTimeoutMs: 10_000,
          claimCheckSendWithinHours: 24,
          s3,
          log,
          stopping: controller.signal,
          warn: () => {},
        },
        { kind: "resume", id: run, rate: undefined, reapply: { inboxRetentionHours: 1 } },
      ),
    );
    expect(refused).toMatchObject({
      code: 64,
      refused: expect.stringContaining("--inbox-retention-hours (1)"),
    });
    const resumed = await runEntryPoint(
      "apps/relay/src/main.ts",
      ["republish", "--resume", run, "--allow-reapply"],
      {
        ...awsEnvironment(stack().aws),
        DATABASE_URL: bed.url,
        RELAY_TOPIC_ARNS: `orders=${topic.topicArn}`,
        LOG_LEVEL: "info",
      },
    );
    expect(resumed.stderr).not.toContain("being worked by another process");
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ run, sent: 3, finished: true });
  });
});
