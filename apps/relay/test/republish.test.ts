import { awsEnvironment, type BootstrappedResources } from "@outbox/devstack";
import { EXAMPLE_HANDLERS_MODULE } from "@outbox/example-handlers/modules";
import {
  faultClient,
  hangLimit,
  queueDepth,
  receiveAll,
  runEntryPoint,
  stack,
  startDaemonProcess,
} from "@outbox/test-kit";
import { sql } from "kysely";
import { describe, expect, it, vi } from "vitest";
import { REPUBLISH_DEFAULT_RATE } from "../src/settings.js";
import { countRows, enqueueAll, events, topicWithQueue, useRelayTestBed } from "./harness.js";

// Its tests start up to 4 programs one after another: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 4 }) });

const bed = useRelayTestBed("republish");

const RELAY_MAIN = "apps/relay/src/main.ts";

/** The command's environment: the database, SNS and a topic routing for `orders`. */
function republishEnv(
  topic: BootstrappedResources,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    ...awsEnvironment(stack().aws),
    DATABASE_URL: bed.url,
    RELAY_TOPIC_ARNS: `orders=${topic.topicArn}`,
    LOG_LEVEL: "info",
    ...extra,
  };
}

interface Outcome {
  run: string;
  sent: number;
  skipped: number;
  failed: number;
  finished: boolean;
}

/** The consumers' inbox retention, CONSUMER_INBOX_RETENTION_HOURS's default: every run names one. */
const RETENTION = ["--inbox-retention-hours", "336"];

async function republish(topic: BootstrappedResources, args: string[], code = 0): Promise<Outcome> {
  const run = await runEntryPoint(RELAY_MAIN, ["republish", ...args, ...RETENTION], republishEnv(topic));
  expect(run.code, run.stderr).toBe(code);
  return JSON.parse(run.stdout) as Outcome;
}

/** The database's clock, as the ISO text `--from` takes: rows published from now on are after it. */
async function databaseNow(): Promise<string> {
  const { rows } = await sql<{ now: string }>`
    SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS now
  `.execute(bed.handle.db);
  return rows[0]?.now ?? "";
}

/** Enqueues and has a relay publish `count` events on `orders`; their ids. */
async function publishedEvents(count: number, offset: number): Promise<string[]> {
  const before = (await countRows(bed.handle)).published;
  const ids = await enqueueAll(bed.handle, events("orders", count, 3, offset));
  const relay = bed.start();
  await expect
    .poll(async () => (await countRows(bed.handle)).published, { timeout: 20_000 })
    .toBe(before + count);
  await bed.stop(relay);
  return ids;
}

/** What a republish must never change: the live relay's columns of every row. */
async function relayColumns(): Promise<unknown[]> {
  const { rows } = await sql`
    SELECT id, published_at::text, attempts, locked_until::text, locked_by, dead_at::text, available_at::text
    FROM outbox ORDER BY seq
  `.execute(bed.handle.db);
  return rows;
}

interface RunRow {
  sent: string;
  /** The cursor as the walk orders rows, (published_at, seq), in microseconds since the epoch and seq. */
  cursor: [number, number] | null;
  finished: boolean;
}

async function runRow(id: string): Promise<RunRow> {
  const { rows } = await sql<{
    sent: string;
    published_us: string | null;
    seq: string | null;
    finished: boolean;
  }>`
    SELECT sent::text AS sent, (extract(epoch FROM cursor_published) * 1e6)::bigint::text AS published_us,
           cursor_seq::text AS seq, finished_at IS NOT NULL AS finished
    FROM relay_republish WHERE id = ${id}::uuid
  `.execute(bed.handle.db);
  const row = rows[0];
  if (row === undefined) return { sent: "0", cursor: null, finished: false };
  const cursor: RunRow["cursor"] =
    row.published_us === null || row.seq === null ? null : [Number(row.published_us), Number(row.seq)];
  return { sent: row.sent, cursor, finished: row.finished };
}

describe("relay republish", () => {
  it("re-sends a range's events, marked replay=true, and changes none of the outbox's rows", async () => {
    const topic = await topicWithQueue("republish-range");
    const env = { topicArns: { orders: topic.topicArn } };
    // Before the range, in it, after it: only the middle goes again.
    await enqueueAll(bed.handle, events("orders", 4, 2, 0));
    let relay = bed.start(env);
    await expect.poll(async () => (await countRows(bed.handle)).unsent, { timeout: 20_000 }).toBe(0);
    await bed.stop(relay);
    const from = await databaseNow();
    const inRange = await enqueueAll(bed.handle, [
      ...events("orders", 6, 2, 100),
      // Another topic's rows are in the time range but not in `--topic orders`.
      ...events("billing", 2, 0, 200),
    ]);
    relay = bed.start({ ...env, topicArns: { ...env.topicArns, billing: topic.topicArn } });
    await expect.poll(async () => (await countRows(bed.handle)).unsent, { timeout: 20_000 }).toBe(0);
    await bed.stop(relay);
    const to = await databaseNow();
    await enqueueAll(bed.handle, events("orders", 3, 2, 300));
    relay = bed.start(env);
    await expect.poll(async () => (await countRows(bed.handle)).unsent, { timeout: 20_000 }).toBe(0);
    await bed.stop(relay);
    const originals = await receiveAll(bed.sqs, topic.queueUrl, 4 + 8 + 3);
    expect(originals.every((message) => message.attributes.replay === undefined)).toBe(true);
    const columns = await relayColumns();

    const outcome = await republish(topic, [
      "--from",
      from,
      "--to",
      to,
      "--topic",
      "orders",
      "--rate",
      "1000",
    ]);
    expect(outcome).toMatchObject({ sent: 6, skipped: 0, failed: 0, finished: true });
    const replays = await receiveAll(bed.sqs, topic.queueUrl, 6);
    expect(replays.map((message) => message.attributes.event_id).sort()).toEqual(inRange.slice(0, 6).sort());
    for (const message of replays) {
      expect(message.attributes).toMatchObject({ replay: "true", event_type: "test.happened" });
      expect(message.attributes.traceparent).toMatch(/^00-/);
    }
    // The bodies are the payloads as enqueued, byte for byte, as the live relay sent them.
    const originalBodies = new Map(originals.map((message) => [message.attributes.event_id, message.body]));
    for (const message of replays) expect(message.body).toBe(originalBodies.get(message.attributes.event_id));
    expect(await relayColumns()).toEqual(columns);

    // A finished run resumed sends nothing more.
    expect(await republish(topic, ["--resume", outcome.run])).toEqual({ ...outcome, finished: true });
    expect(await queueDepth(bed.sqs, topic.queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it("keeps to --rate: by each batch, at most rate × the time since the start plus one batch", async () => {
    const topic = await topicWithQueue("republish-rate");
    const from = await databaseNow();
    await enqueueAll(bed.handle, events("orders", 12, 0, 400));
    const relay = bed.start({ topicArns: { orders: topic.topicArn } });
    await expect.poll(async () => (await countRows(bed.handle)).unsent, { timeout: 20_000 }).toBe(0);
    await bed.stop(relay);
    await receiveAll(bed.sqs, topic.queueUrl, 12);

    const rate = 4;
    const run = await runEntryPoint(
      RELAY_MAIN,
      ["republish", "--from", from, "--topic", "orders", "--rate", String(rate), ...RETENTION],
      republishEnv(topic, { LOG_LEVEL: "debug" }),
    );
    expect(run.code, run.stderr).toBe(0);
    const pages = run.stderr
      .split("\n")
      .filter((line) => line.includes('"msg":"republish page"'))
      .map((line) => JSON.parse(line) as { sentThisRun: number; batch: number; elapsedMs: number });
    // Pages of min(10, rate) rows: 12 rows are 3 batches of 4.
    expect(pages.map((page) => page.batch)).toEqual([4, 4, 4]);
    // Each batch's count against the time since the first send, both as the process saw them.
    for (const page of pages) {
      expect(page.sentThisRun).toBeLessThanOrEqual((rate * page.elapsedMs) / 1_000 + page.batch);
    }
    expect(pages.at(-1)?.sentThisRun).toBe(12);
    expect(await receiveAll(bed.sqs, topic.queueUrl, 12)).toHaveLength(12);
  });

  it("killed half-way, resumes where it stopped: every event of the range sent, no gap", async () => {
    const topic = await topicWithQueue("republish-kill");
    const from = await databaseNow();
    const ids = await publishedEvents(40, 500);
    // The relay published to the bed's topic: this run's goes to its own, so only replays arrive.
    const killed = startDaemonProcess(RELAY_MAIN, republishEnv(topic), {
      args: ["republish", "--from", from, "--topic", "orders", "--rate", "10", ...RETENTION],
    });
    let runId: string | undefined;
    await expect
      .poll(
        async () => {
          const { rows } = await sql<{ id: string; sent: string }>`
            SELECT id, sent::text AS sent FROM relay_republish WHERE from_published = ${from}::timestamptz
          `.execute(bed.handle.db);
          runId = rows[0]?.id;
          return Number(rows[0]?.sent ?? 0);
        },
        { timeout: 30_000, interval: 100 },
      )
      .toBeGreaterThanOrEqual(10);
    killed.child.kill("SIGKILL");
    expect((await killed.exited).signal).toBe("SIGKILL");
    const atKill = await runRow(runId ?? "");
    expect(atKill.finished).toBe(false);
    expect(Number(atKill.sent)).toBeLessThan(ids.length);

    const resumed = await republish(topic, ["--resume", runId ?? "", "--rate", "1000"]);
    expect(resumed).toMatchObject({ run: runId, sent: ids.length, skipped: 0, failed: 0, finished: true });
    const received = await receiveAll(bed.sqs, topic.queueUrl, ids.length);
    const distinct = new Set(received.map((message) => message.attributes.event_id));
    expect([...distinct].sort()).toEqual([...ids].sort());
    // At most the batch in flight at the kill went twice (the inbox makes those duplicates).
    expect(received.length - ids.length).toBeLessThanOrEqual(10);
    expect(received.every((message) => message.attributes.replay === "true")).toBe(true);
  });

  it("SIGTERM ends the run after the batch in hand, its cursor saved: the resume sends the rest, none twice", async () => {
    const topic = await topicWithQueue("republish-term");
    const from = await databaseNow();
    const ids = await publishedEvents(40, 700);
    const stopped = startDaemonProcess(RELAY_MAIN, republishEnv(topic), {
      args: ["republish", "--from", from, "--topic", "orders", "--rate", "10", ...RETENTION],
    });
    await expect
      .poll(
        async () => {
          const { rows } = await sql<{ sent: string }>`
            SELECT sent::text AS sent FROM relay_republish WHERE from_published = ${from}::timestamptz
          `.execute(bed.handle.db);
          return Number(rows[0]?.sent ?? 0);
        },
        { timeout: 30_000, interval: 100 },
      )
      .toBeGreaterThanOrEqual(10);
    stopped.child.kill("SIGTERM");
    expect((await stopped.exited).code).toBe(1);
    // Its one stdout line: the totals so far, the same as the stored ones.
    const summary = stopped.lines.find((line) => typeof line.run === "string") as unknown as Outcome;
    expect(summary).toMatchObject({ failed: 0, finished: false });
    expect(summary.sent).toBeLessThan(ids.length);
    expect(await runRow(summary.run)).toMatchObject({ sent: String(summary.sent), finished: false });

    const resumed = await republish(topic, ["--resume", summary.run, "--rate", "1000"]);
    expect(resumed).toMatchObject({ sent: ids.length, finished: true });
    const received = await receiveAll(bed.sqs, topic.queueUrl, ids.length);
    // A graceful stop re-sends nothing: each event exactly once.
    expect(received.map((message) => message.attributes.event_id).sort()).toEqual([...ids].sort());
  });

  it("a batch the bus refuses in part stops the run before it (exit 1); the resume sends it again", async () => {
    const topic = await topicWithQueue("republish-refused");
    const from = await databaseNow();
    const ids = await publishedEvents(12, 600);
    const faults = faultClient();
    if (faults === null) throw new Error("this test needs the embedded stack's fault injection");
    const refused = ids[5] ?? "";
    await faults.set({
      topics: [topic.topicArn],
      actions: ["PublishBatch"],
      failBatchEntries: { attribute: "event_id", values: [refused] },
    });
    let stopped: Outcome;
    try {
      stopped = await republish(topic, ["--from", from, "--topic", "orders", "--rate", "1000"], 1);
    } finally {
      await faults.clear({ topics: [topic.topicArn] });
    }
    // The first page (10 rows) held the refused one: nothing counted, the cursor before that page.
    expect(stopped).toMatchObject({ sent: 0, failed: 1, finished: false });
    expect(await runRow(stopped.run)).toEqual({ sent: "0", cursor: null, finished: false });

    const resumed = await republish(topic, ["--resume", stopped.run]);
    expect(resumed).toMatchObject({ sent: ids.length, failed: 0, finished: true });
    const received = await receiveAll(bed.sqs, topic.queueUrl, ids.length + 9);
    expect([...new Set(received.map((message) => message.attributes.event_id))].sort()).toEqual(
      [...ids].sort(),
    );
    // The 9 the bus took before the stop went twice: duplicates for the inbox, nothing missing.
    expect(received).toHaveLength(ids.length + 9);
  });

  it("two --resume of one run at once: one works it, the other is refused (exit 1) and sends nothing; each event once, the cursor only forward", async () => {
    const topic = await topicWithQueue("republish-twice");
    const from = await databaseNow();
    const ids = await publishedEvents(40, 900);
    const stopped = startDaemonProcess(RELAY_MAIN, republishEnv(topic), {
      args: ["republish", "--from", from, "--topic", "orders", "--rate", "10", ...RETENTION],
    });
    const sentSoFar = async () => {
      const { rows } = await sql<{ id: string; sent: string }>`
        SELECT id, sent::text AS sent FROM relay_republish WHERE from_published = ${from}::timestamptz
      `.execute(bed.handle.db);
      return { id: rows[0]?.id ?? "", sent: Number(rows[0]?.sent ?? 0) };
    };
    await expect
      .poll(async () => (await sentSoFar()).sent, { timeout: 30_000, interval: 100 })
      .toBeGreaterThan(0);
    stopped.child.kill("SIGTERM");
    expect((await stopped.exited).code).toBe(1);
    const { id: run, sent: before } = await sentSoFar();
    expect(before).toBeLessThan(ids.length);

    // The first resume, at one event a second, holds the run; the second starts while it works.
    const first = startDaemonProcess(RELAY_MAIN, republishEnv(topic), {
      args: ["republish", "--resume", run, "--rate", "1", ...RETENTION],
    });
    await expect
      .poll(async () => Number((await runRow(run)).sent), { timeout: 30_000, interval: 50 })
      .toBeGreaterThan(before);
    const cursors: [number, number][] = [];
    const watch = setInterval(async () => {
      const row = await runRow(run);
      if (row.cursor !== null) cursors.push(row.cursor);
    }, 50);
    try {
      const second = await runEntryPoint(
        RELAY_MAIN,
        ["republish", "--resume", run, "--rate", "1000", ...RETENTION],
        republishEnv(topic),
      );
      expect({ code: second.code, stdout: second.stdout }).toEqual({ code: 1, stdout: "" });
      expect(second.stderr).toContain(
        `relay republish: run ${run} is being worked by another process; nothing sent (try again once it has stopped)`,
      );
      expect(await runRow(run)).toMatchObject({ finished: false });
      first.child.kill("SIGTERM");
      expect((await first.exited).code).toBe(1);
      // Once the first has stopped, the run is free again.
      expect(await republish(topic, ["--resume", run, "--rate", "1000"])).toMatchObject({
        sent: ids.length,
        finished: true,
      });
    } finally {
      clearInterval(watch);
    }
    // Seen from outside, the cursor only ever moved forward, in the walk's (published_at, seq) order:
    // seq alone may step back where the relay published a later seq of another key first.
    const precedes = (a: [number, number], b: [number, number]) =>
      a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
    const backwards = cursors.filter(
      (cursor, i) => i > 0 && precedes(cursor, cursors[i - 1] as [number, number]),
    );
    expect(backwards).toEqual([]);
    const received = await receiveAll(bed.sqs, topic.queueUrl, ids.length);
    // A graceful stop and one resume: each event exactly once.
    expect(received.map((message) => message.attributes.event_id).sort()).toEqual([...ids].sort());
  });

  it("refuses a range with rows older than the consumers' inbox retention (exit 64, no run); --allow-reapply sends them, the consequence printed", async () => {
    const topic = await topicWithQueue("republish-aged");
    const ids = await publishedEvents(3, 1_100);
    // Published 2 h ago, as far as the range is concerned: their inbox rows may be gone after 1 h.
    await sql`
      UPDATE outbox SET published_at = published_at - interval '2 hours' WHERE id = ANY(${ids}::uuid[])
    `.execute(bed.handle.db);
    // Exactly these rows: nothing else was published two hours ago.
    const { rows: bounds } = await sql<{ first: string; after: string }>`
      SELECT to_char(min(published_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS first,
             to_char((max(published_at) + interval '1 millisecond') AT TIME ZONE 'UTC',
                     'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS after
      FROM outbox WHERE id = ANY(${ids}::uuid[])
    `.execute(bed.handle.db);
    const args = [
      "republish",
      "--from",
      bounds[0]?.first ?? "",
      "--to",
      bounds[0]?.after ?? "",
      "--topic",
      "orders",
    ];
    const refused = await runEntryPoint(
      RELAY_MAIN,
      [...args, "--inbox-retention-hours", "1"],
      republishEnv(topic),
    );
    expect({ code: refused.code, stdout: refused.stdout }, refused.stderr).toEqual({ code: 64, stdout: "" });
    expect(refused.stderr).toMatch(
      /(^|\n)relay republish: the range holds rows published at .+, more than --inbox-retention-hours \(1\) ago: a consumer may have deleted their inbox rows and would apply their effects again\. Narrow the range, or pass --allow-reapply to send them anyway\.\n/,
    );
    const { rows } = await sql`
      SELECT id FROM relay_republish WHERE to_published = ${bounds[0]?.after ?? ""}::timestamptz
    `.execute(bed.handle.db);
    expect(rows).toHaveLength(0);
    expect(await queueDepth(bed.sqs, topic.queueUrl)).toEqual({ visible: 0, inFlight: 0 });

    // Within the retention named, the same range goes.
    const allowed = await runEntryPoint(RELAY_MAIN, [...args, "--allow-reapply"], republishEnv(topic));
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stderr).toContain(
      "relay republish: --allow-reapply: consumers whose inbox no longer holds these events will apply their effects again",
    );
    expect(JSON.parse(allowed.stdout)).toMatchObject({ sent: ids.length, finished: true });
  });

  it("a replay reaching a consumer that had the events: duplicates in its inbox, no second effect", async () => {
    const topic = await topicWithQueue("republish-inbox");
    const from = await databaseNow();
    const consumerEnv = {
      ...awsEnvironment(stack().aws),
      LOG_LEVEL: "info",
      DATABASE_URL: bed.url,
      CONSUMER_QUEUE_URL: topic.queueUrl,
      CONSUMER_NAME: "replayed",
      CONSUMER_HANDLERS_MODULE: EXAMPLE_HANDLERS_MODULE,
      CONSUMER_WAIT_TIME_SECONDS: "1",
    };
    const consumer = startDaemonProcess("apps/consumer/src/main.ts", consumerEnv);
    await consumer.waitForLog("started");
    const ids = await enqueueAll(
      bed.handle,
      Array.from({ length: 6 }, (_, index) => ({
        topic: "orders",
        eventType: "example.created",
        payload: { name: `replayed-${index}` },
      })),
    );
    const relay = bed.start({ topicArns: { orders: topic.topicArn } });
    const inboxCount = async () => {
      const rows = await bed.handle.db
        .selectFrom("inbox")
        .select("event_id")
        .where("consumer", "=", "replayed")
        .execute();
      return rows.length;
    };
    await expect.poll(inboxCount, { timeout: 30_000 }).toBe(ids.length);
    await bed.stop(relay);
    const effects = async () => {
      const { rows } = await sql<{ count: string }>`
        SELECT count(*)::text AS count FROM example_effects WHERE event_id = ANY(${ids}::uuid[])
      `.execute(bed.handle.db);
      return Number(rows[0]?.count);
    };
    expect(await effects()).toBe(ids.length);

    const outcome = await republish(topic, ["--from", from, "--topic", "orders"]);
    expect(outcome).toMatchObject({ sent: ids.length, finished: true });
    await expect
      .poll(() => queueDepth(bed.sqs, topic.queueUrl), { timeout: 20_000 })
      .toEqual({ visible: 0, inFlight: 0 });
    consumer.child.kill("SIGTERM");
    expect((await consumer.exited).code).toBe(0);
    const drained = consumer.lines.find((line) => line.msg === "drained");
    expect(drained).toMatchObject({ processed: ids.length, duplicates: ids.length, failed: 0 });
    expect(await effects()).toBe(ids.length);
    expect(await inboxCount()).toBe(ids.length);
  });
});

describe("relay republish's command line", () => {
  it("--help names its options and variables; the default rate it prints is the setting's", async () => {
    const help = await runEntryPoint(RELAY_MAIN, ["republish", "--help"]);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^usage: relay republish --from TIME/);
    expect(help.stdout).toContain(`(default ${REPUBLISH_DEFAULT_RATE})`);
    expect(help.stdout).toMatch(/\n {2}RELAY_TOPIC_ARNS\n/);
  });

  it("refuses a bad range or a bad resume as a usage error, before anything runs", async () => {
    const [noZone, inverted, resumeWithRange, noFrom] = await Promise.all([
      runEntryPoint(RELAY_MAIN, ["republish", "--from", "2026-12-01T10:00"]),
      runEntryPoint(RELAY_MAIN, [
        "republish",
        "--from",
        "2026-12-02T00:00:00Z",
        "--to",
        "2026-12-01T00:00:00Z",
      ]),
      runEntryPoint(RELAY_MAIN, [
        "republish",
        "--resume",
        "0190f0e0-0000-7000-8000-000000000000",
        "--topic",
        "orders",
      ]),
      runEntryPoint(RELAY_MAIN, ["republish", "--rate", "5"]),
    ]);
    for (const run of [noZone, inverted, resumeWithRange, noFrom]) {
      expect({ code: run.code, stdout: run.stdout }, run.stderr).toEqual({ code: 64, stdout: "" });
    }
    expect(noZone.stderr).toMatch(/^--from needs a timestamp with its zone/);
    expect(inverted.stderr).toMatch(/^--to \(2026-12-01T00:00:00Z\) must be later than --from/);
    expect(resumeWithRange.stderr).toMatch(/^--resume continues the run's own range: drop --topic\n/);
    expect(noFrom.stderr).toMatch(/^--from is required \(or --resume RUN\)\n/);
  });

  it("refuses a run that names neither the consumers' inbox retention nor --allow-reapply (exit 64)", async () => {
    const [unnamed, resumeUnnamed, both] = await Promise.all([
      runEntryPoint(RELAY_MAIN, ["republish", "--from", "2026-12-01T10:00:00Z"]),
      runEntryPoint(RELAY_MAIN, ["republish", "--resume", "0190f0e0-0000-7000-8000-000000000000"]),
      runEntryPoint(RELAY_MAIN, [
        "republish",
        "--from",
        "2026-12-01T10:00:00Z",
        "--inbox-retention-hours",
        "336",
        "--allow-reapply",
      ]),
    ]);
    for (const run of [unnamed, resumeUnnamed]) {
      expect({ code: run.code, stdout: run.stdout }, run.stderr).toEqual({ code: 64, stdout: "" });
      expect(run.stderr).toMatch(
        /^name the consumers' inbox retention with --inbox-retention-hours H \(their CONSUMER_INBOX_RETENTION_HOURS, the smallest\): rows older than it may have lost their inbox rows and would apply their effects again; or --allow-reapply\n/,
      );
    }
    expect(both.code).toBe(64);
    expect(both.stderr).toMatch(/^--allow-reapply and --inbox-retention-hours exclude each other\n/);
  });

  it("without a topic routing it does not start: one line, exit 78", async () => {
    const run = await runEntryPoint(
      RELAY_MAIN,
      ["republish", "--from", "2026-12-01T10:00:00Z", ...RETENTION],
      {
        DATABASE_URL: "postgres://nobody@127.0.0.1:1/unused",
        RELAY_TOPIC_ARNS: "",
        RELAY_DEFAULT_TOPIC_ARN: "",
      },
    );
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 78, stdout: "" });
    expect(run.stderr.trim().split("\n")).toEqual([
      "relay republish: config error: RELAY_TOPIC_ARNS: neither RELAY_TOPIC_ARNS nor RELAY_DEFAULT_TOPIC_ARN is set: every row would be dead at once (unknown topic); map the outbox topics to SNS topic ARNs",
    ]);
  });
});
