import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { awsEnvironment, type BootstrappedResources, s3Client } from "@outbox/devstack";
import type { ExampleEffectsTable } from "@outbox/example-handlers";
import { EXAMPLE_HANDLERS_MODULE } from "@outbox/example-handlers/modules";
import { commonSettings, findBudgetProblems, loadConfig } from "@outbox/shared";
import {
  configRefusal,
  type DaemonProcess,
  drainQueue,
  expectAnswer,
  expectUsageError,
  hangLimit,
  queueDepth,
  runEntryPoint,
  stack,
  startDaemonProcess,
  versionOf,
} from "@outbox/test-kit";
import { describe, expect, it, vi } from "vitest";
import { consumerSettings, consumerTimeouts } from "../src/settings.js";
import { hostileThrows } from "./fixtures/hostile-handlers.js";
import {
  effectCount,
  exampleEvent,
  inboxRowsOf,
  queueFor,
  sendBody,
  sendRaw,
  useConsumerTestBed,
} from "./harness.js";

// Its tests start up to 4 programs one after another: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 4 }) });

const bed = useConsumerTestBed("consumer_daemon");

function daemonEnv(
  queue: BootstrappedResources,
  name: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  const { aws } = stack();
  return {
    LOG_LEVEL: "info",
    DATABASE_URL: bed.databaseUrl,
    ...awsEnvironment(aws),
    CONSUMER_QUEUE_URL: queue.queueUrl,
    CONSUMER_DLQ_URL: queue.dlqUrl,
    CONSUMER_NAME: name,
    CONSUMER_HANDLERS_MODULE: fileURLToPath(new URL("./fixtures/slow-handlers.ts", import.meta.url)),
    SLOW_HANDLER_MS: "300",
    CONSUMER_POLLERS: "2",
    CONSUMER_CONCURRENCY: "5",
    CONSUMER_WAIT_TIME_SECONDS: "1",
    // Short leases, so what a SIGKILL strands comes back within seconds.
    CONSUMER_VISIBILITY_TIMEOUT_SECONDS: "3",
    CONSUMER_VISIBILITY_MARGIN_MS: "500",
    AWS_REQUEST_TIMEOUT_MS: "2000",
    ...extra,
  };
}

async function inboxCount(name: string): Promise<number> {
  return (await inboxRowsOf(bed.database, name)).length;
}

function drainedLine(run: DaemonProcess): Record<string, unknown> {
  const line = run.lines.find((entry) => entry.msg === "drained");
  if (!line) throw new Error(`no drained line; stderr: ${run.stderr()}`);
  return line;
}

/** Runs the daemon until the queue is empty and every event has its effect, then stops it with SIGTERM. */
async function drainEverything(
  env: Record<string, string>,
  name: string,
  total: number,
  queue: BootstrappedResources,
) {
  const run = startDaemonProcess("apps/consumer/src/main.ts", env);
  await run.waitForLog("started");
  await expect.poll(() => inboxCount(name), { timeout: 30_000, interval: 200 }).toBe(total);
  await expect
    .poll(() => queueDepth(bed.sqs, queue.queueUrl), { timeout: 10_000 })
    .toEqual({ visible: 0, inFlight: 0 });
  run.child.kill("SIGTERM");
  expect((await run.exited).code).toBe(0);
  return drainedLine(run);
}

async function effectsOf(name: string): Promise<number> {
  const rows = await bed.database.db
    .withTables<{ example_effects: ExampleEffectsTable }>()
    .selectFrom("example_effects")
    .innerJoin("inbox", "inbox.event_id", "example_effects.event_id")
    .select("example_effects.event_id")
    .where("inbox.consumer", "=", name)
    .execute();
  return rows.length;
}

describe("the consumer daemon as a real process", () => {
  it.each([
    { handlers: "one message per transaction", module: "slow-handlers.ts", name: "term" },
    { handlers: "a batch handler", module: "slow-batch-handlers.ts", name: "term-batch" },
  ])(
    "on SIGTERM finishes and deletes every received message, exits 0; a restart sees no duplicate ($handlers)",
    async ({ module, name }) => {
      const queue = await queueFor(`daemon-${name}`);
      const events = Array.from({ length: 40 }, (_, index) => exampleEvent(`${name}-${index}`));
      await sendRaw(bed.sqs, queue.queueUrl, events);
      const env = daemonEnv(queue, name, {
        CONSUMER_HANDLERS_MODULE: fileURLToPath(new URL(`./fixtures/${module}`, import.meta.url)),
      });

      const first = startDaemonProcess("apps/consumer/src/main.ts", env);
      await first.waitForLog("started");
      await expect.poll(() => inboxCount(name), { timeout: 20_000, interval: 50 }).toBeGreaterThanOrEqual(5);
      first.child.kill("SIGTERM");
      expect((await first.exited).code).toBe(0);
      const stopped = drainedLine(first);
      expect(stopped).toMatchObject({ clean: true, duplicates: 0, failed: 0, poison: 0 });
      // Nothing stranded: every message received was deleted after its commit, or released.
      expect((await queueDepth(bed.sqs, queue.queueUrl)).inFlight).toBe(0);
      expect(await inboxCount(name)).toBe(stopped.processed);
      expect(Number(stopped.processed)).toBeLessThan(events.length);
      const messages = first.lines.map((line) => line.msg);
      expect(messages.indexOf("draining")).toBeLessThan(messages.indexOf("drained"));

      const restarted = await drainEverything(env, name, events.length, queue);
      expect(restarted).toMatchObject({ clean: true, duplicates: 0, failed: 0 });
      expect(Number(stopped.processed) + Number(restarted.processed)).toBe(events.length);
      expect(await effectsOf(name)).toBe(events.length);
    },
  );

  it("fetches a claim-checked payload from the stack's S3 (AWS_ENDPOINT_URL_S3, CONSUMER_CLAIM_CHECK_BUCKET) before its handler", async () => {
    const queue = await queueFor("daemon-claim");
    const bucket = stack().claimCheckBucket ?? "";
    const key = `daemon/${randomUUID()}`;
    const s3 = s3Client(stack().aws);
    const payload = JSON.stringify({ name: "x".repeat(300 * 1024) });
    try {
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: payload }));
    } finally {
      s3.destroy();
    }
    const event = exampleEvent();
    await sendBody(
      bed.sqs,
      queue.queueUrl,
      JSON.stringify([
        "software.amazon.payloadoffloading.PayloadS3Pointer",
        { s3BucketName: bucket, s3Key: key },
      ]),
      {
        event_id: { DataType: "String", StringValue: event.id },
        event_type: { DataType: "String", StringValue: event.type },
        ExtendedPayloadSize: { DataType: "Number", StringValue: String(Buffer.byteLength(payload)) },
      },
    );
    const drained = await drainEverything(
      daemonEnv(queue, "claim", { CONSUMER_CLAIM_CHECK_BUCKET: bucket }),
      "claim",
      1,
      queue,
    );
    expect(drained).toMatchObject({ clean: true, processed: 1, failed: 0, poison: 0 });
    const [effect] = await bed.database.db
      .withTables<{ example_effects: ExampleEffectsTable }>()
      .selectFrom("example_effects")
      .select("payload")
      .where("event_id", "=", event.id)
      .execute();
    expect(JSON.stringify(effect?.payload) === payload).toBe(true);
  });

  it("after SIGKILL the redeliveries of committed-but-undeleted messages are caught by the inbox", async () => {
    const queue = await queueFor("daemon-kill");
    const events = Array.from({ length: 40 }, (_, index) => exampleEvent(`kill-${index}`));
    await sendRaw(bed.sqs, queue.queueUrl, events);
    // A partial delete batch waits up to 5 s: the kill lands between commits and their deletes.
    const first = startDaemonProcess(
      "apps/consumer/src/main.ts",
      daemonEnv(queue, "kill", { CONSUMER_DELETE_FLUSH_MS: "5000", CONSUMER_CONCURRENCY: "3" }),
    );
    await first.waitForLog("started");
    await expect.poll(() => inboxCount("kill"), { timeout: 20_000, interval: 20 }).toBeGreaterThanOrEqual(3);
    first.child.kill("SIGKILL");
    expect((await first.exited).signal).toBe("SIGKILL");
    const committed = await inboxCount("kill");

    const restarted = await drainEverything(daemonEnv(queue, "kill"), "kill", events.length, queue);
    expect(Number(restarted.duplicates)).toBeGreaterThan(0);
    expect(Number(restarted.duplicates)).toBeLessThanOrEqual(committed);
    expect(Number(restarted.processed)).toBe(events.length - committed);
    expect(await effectsOf("kill")).toBe(events.length);
    expect(await effectCount(bed.database)).toBeGreaterThanOrEqual(events.length);
  });

  it("fails a message whose handler throws what String() cannot convert, and keeps running", async () => {
    const queue = await queueFor("daemon-hostile", { maxReceiveCount: 2 });
    const events = Object.keys(hostileThrows).map((type) => ({ id: randomUUID(), type, payload: {} }));
    await sendRaw(bed.sqs, queue.queueUrl, events);
    const run = startDaemonProcess(
      "apps/consumer/src/main.ts",
      daemonEnv(queue, "hostile", {
        CONSUMER_HANDLERS_MODULE: fileURLToPath(new URL("./fixtures/hostile-handlers.ts", import.meta.url)),
        CONSUMER_RETRY_BASE_SECONDS: "0",
      }),
    );
    await run.waitForLog("started");
    // Each is retried until the queue's redrive policy moves it to the DLQ: failed, never a crash.
    const dead: unknown[] = [];
    await expect
      .poll(
        async () => {
          dead.push(...(await drainQueue(bed.sqs, queue.dlqUrl)));
          return dead.length;
        },
        { timeout: 30_000, interval: 500 },
      )
      .toBe(events.length);
    const failures = run.lines.filter((line) => line.msg === "message failed; retrying later");
    expect(failures.length).toBeGreaterThanOrEqual(events.length);
    run.child.kill("SIGTERM");
    expect((await run.exited).code).toBe(0);
    expect(drainedLine(run)).toMatchObject({ clean: true, poison: 0, processed: 0 });
    expect(run.lines.some((line) => line.msg === "message handling crashed")).toBe(false);
  });

  it("refuses bad config with exit 78 and one line per problem", async () => {
    const parse = await configRefusal("apps/consumer/src/main.ts", {
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
      CONSUMER_HANDLERS_MODULE: EXAMPLE_HANDLERS_MODULE,
      CONSUMER_QUEUE_URL: "",
      CONSUMER_POLLERS: "0",
    });
    expect(parse).toEqual([
      "consumer: config error: CONSUMER_QUEUE_URL: is required",
      'consumer: config error: CONSUMER_POLLERS: must be between 1 and 64 (got "0")',
    ]);

    const lines = await configRefusal("apps/consumer/src/main.ts", {
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
      CONSUMER_HANDLERS_MODULE: EXAMPLE_HANDLERS_MODULE,
      CONSUMER_QUEUE_URL: "http://127.0.0.1:1/000000000000/q",
      CONSUMER_WAIT_TIME_SECONDS: "20",
      CONSUMER_INBOX_RETENTION_HOURS: "24",
      CONSUMER_CONCURRENCY: "25",
    });
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^consumer: config error: CONSUMER_CONCURRENCY: 25 must be less than DB_POOL_MAX \(25\)/,
    );
    expect(lines[1]).toMatch(
      /^consumer: config error: CONSUMER_WAIT_TIME_SECONDS: 20000 ms \+ AWS_REQUEST_TIMEOUT_MS \(5000 ms\) = 25000 ms must be less than CONSUMER_DRAIN_TIMEOUT_MS \(20000 ms\)/,
    );
    expect(lines[2]).toMatch(
      /^consumer: config error: CONSUMER_QUEUE_RETENTION_HOURS: .* must be less than CONSUMER_INBOX_RETENTION_HOURS/,
    );
    expect(lines.join("\n")).not.toMatch(/\bat \S+:\d+:\d+/);
  });

  const refusal = (env: Record<string, string>) =>
    configRefusal("apps/consumer/src/main.ts", {
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
      CONSUMER_QUEUE_URL: "http://127.0.0.1:1/000000000000/q",
      CONSUMER_HANDLERS_MODULE: EXAMPLE_HANDLERS_MODULE,
      ...env,
    });

  it("refuses to start without a handlers module, in one line", async () => {
    expect(await refusal({ CONSUMER_HANDLERS_MODULE: "" })).toEqual([
      'consumer: config error: CONSUMER_HANDLERS_MODULE: is required: the path of your module whose default export is defineHandlers(...) (docs/consumer.md, "Your own handlers")',
    ]);
  });

  it("reports every problem at once: a concurrency above the pool and an inverted stop budget", async () => {
    expect(await refusal({ CONSUMER_CONCURRENCY: "30", CONSUMER_DRAIN_TIMEOUT_MS: "28000" })).toEqual([
      "consumer: config error: CONSUMER_CONCURRENCY: 30 must be less than DB_POOL_MAX (25): each message holds a connection for its transaction, and the inbox cleanup needs one more",
      "consumer: config error: CONSUMER_DRAIN_TIMEOUT_MS: 28000 ms + SHUTDOWN_OVERHEAD_MS (5000 ms) = 33000 ms must be less than STOP_TIMEOUT_MS (30000 ms): the drain must end before the platform's SIGKILL",
    ]);
  });

  it("reports every problem at once: an unparsable variable and an inverted drain budget", async () => {
    const lines = await refusal({
      CONSUMER_POLLERS: "0",
      CONSUMER_DRAIN_TIMEOUT_MS: "12000",
      CONSUMER_WAIT_TIME_SECONDS: "10",
    });
    expect(lines).toEqual([
      'consumer: config error: CONSUMER_POLLERS: must be between 1 and 64 (got "0")',
      "consumer: config error: CONSUMER_WAIT_TIME_SECONDS: 10000 ms + AWS_REQUEST_TIMEOUT_MS (5000 ms) = 15000 ms must be less than CONSUMER_DRAIN_TIMEOUT_MS (12000 ms): a long poll open at the stop must return, and its messages be handled or released, within the drain",
    ]);
  });

  it("refuses envelope delivery without topics to unwrap, topics with raw delivery, and what is not a topic ARN", async () => {
    const refused = (message: string) => [`consumer: config error: CONSUMER_TOPIC_ARNS: ${message}`];
    const [noTopics, rawWithTopics, notAnArn] = await Promise.all([
      refusal({ CONSUMER_DELIVERY: "envelope" }),
      refusal({ CONSUMER_TOPIC_ARNS: "arn:aws:sns:us-east-1:000000000000:events" }),
      refusal({
        CONSUMER_DELIVERY: "envelope",
        CONSUMER_TOPIC_ARNS: "arn:aws:sns:us-east-1:000000000000:a, events",
      }),
    ]);
    expect(noTopics).toEqual(
      refused(
        "is required with CONSUMER_DELIVERY=envelope: only notifications of these topics are unwrapped",
      ),
    );
    expect(rawWithTopics).toEqual(
      refused("is only read with CONSUMER_DELIVERY=envelope: raw delivery never unwraps a body"),
    );
    expect(notAnArn).toEqual(
      refused('expected SNS topic ARNs (arn:aws:sns:<region>:<account>:<topic>), got "events"'),
    );
  });

  it("refuses a claim-check fetch timeout that would leave the handler nothing, only with a bucket set", async () => {
    const tight = { CONSUMER_HANDLER_TIMEOUT_MS: "5000", DB_STATEMENT_TIMEOUT_MS: "2000" };
    expect(await refusal({ ...tight, CONSUMER_CLAIM_CHECK_BUCKET: "claims" })).toEqual([
      "consumer: config error: CONSUMER_CLAIM_CHECK_FETCH_TIMEOUT_MS: 10000 ms must be less than CONSUMER_HANDLER_TIMEOUT_MS (5000 ms): a claim-checked payload is fetched within its message's deadline, and the handler needs some of it",
    ]);
    // Without a bucket the fetch never happens, and its timeout is not checked.
    const config = loadConfig(consumerSettings, {
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
      CONSUMER_QUEUE_URL: "http://127.0.0.1:1/000000000000/q",
      ...tight,
    });
    expect(findBudgetProblems(consumerTimeouts(config).rules)).toEqual([]);
  });

  it("has defaults that pass its own budget check and the common one", () => {
    const config = loadConfig(consumerSettings, {
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
      CONSUMER_QUEUE_URL: "http://127.0.0.1:1/000000000000/q",
    });
    const { drain } = consumerTimeouts(config);
    const common = findBudgetProblems([
      {
        inner: [drain, { env: "SHUTDOWN_OVERHEAD_MS", ms: config.shutdownOverheadMs }],
        outer: { env: "STOP_TIMEOUT_MS", ms: config.stopTimeoutMs },
        why: "drain before SIGKILL",
      },
    ]);
    expect(common).toEqual([]);
    expect(config.stopTimeoutMs).toBe(commonSettings.stopTimeoutMs.default);
  });
});

describe("the consumer's command line", () => {
  const consumer = (...args: string[]) => runEntryPoint("apps/consumer/src/main.ts", args);
  const programUsage = /^usage: consumer \[run\] +consume the SQS queue into the inbox until SIGTERM\n/;

  it("--help and -h print the usage on stdout and exit 0; --version the package version", async () => {
    const [help, h, run, version] = await Promise.all([
      consumer("--help"),
      consumer("-h"),
      consumer("run", "--help"),
      consumer("--version"),
    ]);
    expectAnswer(help, programUsage);
    expectAnswer(h, programUsage);
    expectAnswer(
      run,
      /^usage: consumer \[run\]\n\nconsume the SQS queue[\s\S]*CONSUMER_HANDLERS_MODULE[\s\S]*exits 78/,
    );
    expectAnswer(version, new RegExp(`^${versionOf("apps/consumer/package.json")}\n$`));
  });

  it("a usage error prints the reason and the usage on stderr and exits 64", async () => {
    const [command, flag, argument] = await Promise.all([
      consumer("drain"),
      consumer("--queue", "q"),
      consumer("run", "--pollers", "2"),
    ]);
    expectUsageError(command, "unknown command: drain", programUsage);
    expectUsageError(flag, "Unknown option '--queue'", programUsage);
    expectUsageError(argument, "Unknown option '--pollers'", /^usage: consumer \[run\]\n/);
  });
});
