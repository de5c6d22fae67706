import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { NewEvent } from "@outbox/client";
import type { DatabaseHandle } from "@outbox/shared";
import {
  configRefusal,
  expectAnswer,
  expectUsageError,
  hangLimit,
  runEntryPoint,
  versionOf,
} from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { commandSettings } from "../src/cli/open-database.js";
import { claimBatch, markPublished } from "../src/outbox-store.js";
import { requeueDeadSettings } from "../src/settings.js";
import { enqueueAll, events, migratedDatabase } from "./harness.js";

// Its tests start up to 6 programs one after another: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 6 }) });

const run = promisify(execFile);
const mainPath = fileURLToPath(new URL("../src/main.ts", import.meta.url));

describe("relay daemon configuration", () => {
  it("refuses bad config with exit 78 and one line per problem", async () => {
    expect(
      await configRefusal("apps/relay/src/main.ts", {
        DATABASE_URL: "",
        RELAY_BATCH_SIZE: "0",
        RELAY_TOPIC_ARNS: "orders",
      }),
    ).toEqual([
      "relay: config error: DATABASE_URL: is required",
      'relay: config error: RELAY_BATCH_SIZE: must be between 1 and 1000 (got "0")',
      'relay: config error: RELAY_TOPIC_ARNS: expected key=value (got "orders")',
    ]);
  });

  it("refuses a lease shorter than the drain, and a publish longer than the drain", async () => {
    expect(
      await configRefusal("apps/relay/src/main.ts", {
        DATABASE_URL: "postgres://nobody@127.0.0.1:1/unused",
        RELAY_DEFAULT_TOPIC_ARN: "arn:aws:sns:us-east-1:000000000000:events",
        RELAY_LEASE_MS: "20000",
        AWS_REQUEST_TIMEOUT_MS: "8000",
      }),
    ).toEqual([
      "relay: config error: AWS_REQUEST_TIMEOUT_MS×AWS_MAX_ATTEMPTS: 24000 ms must be less than RELAY_DRAIN_TIMEOUT_MS (20000 ms): a PublishBatch in flight, with its retries, must be able to finish within the drain",
      "relay: config error: RELAY_DRAIN_TIMEOUT_MS: 20000 ms + DB_STATEMENT_TIMEOUT_MS (5000 ms) = 25000 ms must be less than RELAY_LEASE_MS (20000 ms): a row must stay leased while the drain may still publish or mark it, or another relay publishes it twice",
    ]);
  });
});

describe("relay configuration: every problem, every time", () => {
  const refusal = (env: Record<string, string>) =>
    configRefusal("apps/relay/src/main.ts", {
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/unused",
      RELAY_DEFAULT_TOPIC_ARN: "arn:aws:sns:us-east-1:000000000000:events",
      ...env,
    });
  const stopBudget = (drainMs: number) =>
    `relay: config error: RELAY_DRAIN_TIMEOUT_MS: ${drainMs} ms + SHUTDOWN_OVERHEAD_MS (5000 ms) = ${drainMs + 5000} ms must be less than STOP_TIMEOUT_MS (30000 ms): the drain must end before the platform's SIGKILL`;

  it("a relay that could route no row, or routes to something that is not a topic ARN, does not start", async () => {
    expect(await refusal({ RELAY_DEFAULT_TOPIC_ARN: "" })).toEqual([
      "relay: config error: RELAY_TOPIC_ARNS: neither RELAY_TOPIC_ARNS nor RELAY_DEFAULT_TOPIC_ARN is set: every row would be dead at once (unknown topic); map the outbox topics to SNS topic ARNs",
    ]);
    expect(
      await refusal({
        RELAY_TOPIC_ARNS:
          "orders=arn:aws:sns:us-east-1:000000000000:orders,photos=arn:aws:sqs:us-east-1:1:photos",
        RELAY_DEFAULT_TOPIC_ARN: "events",
      }),
    ).toEqual([
      'relay: config error: RELAY_TOPIC_ARNS: photos: "arn:aws:sqs:us-east-1:1:photos" is not an SNS topic ARN',
      'relay: config error: RELAY_DEFAULT_TOPIC_ARN: "events" is not an SNS topic ARN',
    ]);
  });

  it("an unparsable variable and an inverted drain budget: both lines, exit 78", async () => {
    expect(await refusal({ RELAY_BATCH_SIZE: "0", RELAY_DRAIN_TIMEOUT_MS: "30000" })).toEqual([
      'relay: config error: RELAY_BATCH_SIZE: must be between 1 and 1000 (got "0")',
      stopBudget(30_000),
    ]);
  });

  it("TLS settings that cannot work are listed with the other problems, not after them", async () => {
    expect(
      await refusal({
        DB_SSL_MODE: "verify-full",
        DB_SSL_CA_FILE: "/nonexistent/ca.pem",
        RELAY_BATCH_SIZE: "0",
        RELAY_DRAIN_TIMEOUT_MS: "30000",
      }),
    ).toEqual([
      'relay: config error: RELAY_BATCH_SIZE: must be between 1 and 1000 (got "0")',
      "relay: config error: DB_SSL_CA_FILE: cannot read /nonexistent/ca.pem (ENOENT), which DB_SSL_MODE=verify-full needs",
      stopBudget(30_000),
    ]);
    // The URL's TLS parameters too.
    const url = "postgres://nobody@127.0.0.1:1/unused?sslmode=prefer&sslrootcert=/ca.pem";
    const sslrootcert =
      "relay: config error: DATABASE_URL: the URL's sslrootcert parameter is not used: TLS is set by DB_SSL_MODE and DB_SSL_CA_FILE (remove it from the URL)";
    expect(await refusal({ DATABASE_URL: url, RELAY_BATCH_SIZE: "0" })).toEqual([
      'relay: config error: RELAY_BATCH_SIZE: must be between 1 and 1000 (got "0")',
      sslrootcert,
      "relay: config error: DATABASE_URL: sslmode=prefer is not supported (no fallback between TLS and plain text, no CA-only check): use disable, require or verify-full, in the URL or in DB_SSL_MODE",
    ]);
    // With DB_SSL_MODE unparsable the mode is unknown: the URL's sslmode (it counts only under
    // `auto`) is not judged, the other TLS parameter still is.
    expect(await refusal({ DATABASE_URL: url, DB_SSL_MODE: "bogus", RELAY_BATCH_SIZE: "0" })).toEqual([
      'relay: config error: DB_SSL_MODE: expected one of auto, disable, require, verify-full (got "bogus")',
      'relay: config error: RELAY_BATCH_SIZE: must be between 1 and 1000 (got "0")',
      sslrootcert,
    ]);
  });

  it("status and requeue-dead check their few settings the same way: every problem, exit 78", async () => {
    const env = {
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/unused?sslmode=prefer",
      DB_STATEMENT_TIMEOUT_MS: "5s",
    };
    const sslmode =
      "config error: DATABASE_URL: sslmode=prefer is not supported (no fallback between TLS and plain text, no CA-only check): use disable, require or verify-full, in the URL or in DB_SSL_MODE";
    const [status, requeue] = await Promise.all([
      configRefusal("apps/relay/src/main.ts", env, ["status"]),
      configRefusal("apps/relay/src/main.ts", env, ["requeue-dead"]),
    ]);
    expect(status).toEqual([
      'relay status: config error: DB_STATEMENT_TIMEOUT_MS: expected a whole number (got "5s")',
      `relay status: ${sslmode}`,
    ]);
    expect(requeue).toEqual([
      'relay requeue-dead: config error: DB_STATEMENT_TIMEOUT_MS: expected a whole number (got "5s")',
      `relay requeue-dead: ${sslmode}`,
    ]);
  });

  it("a retry backoff base above its cap is listed with the budget problems", async () => {
    expect(await refusal({ RELAY_BACKOFF_BASE_MS: "400000", RELAY_DRAIN_TIMEOUT_MS: "30000" })).toEqual([
      "relay: config error: RELAY_BACKOFF_BASE_MS: 400000 must not exceed RELAY_BACKOFF_MAX_MS (300000)",
      "relay: config error: RELAY_BACKOFF_BASE_MS: 400000 must not exceed RELAY_OUTAGE_BACKOFF_MAX_MS (30000)",
      stopBudget(30_000),
    ]);
  });

  it("a lease shorter than the drain and an inverted stop budget: both lines, exit 78", async () => {
    expect(await refusal({ RELAY_DRAIN_TIMEOUT_MS: "28000", RELAY_LEASE_MS: "30000" })).toEqual([
      stopBudget(28_000),
      "relay: config error: RELAY_DRAIN_TIMEOUT_MS: 28000 ms + DB_STATEMENT_TIMEOUT_MS (5000 ms) = 33000 ms must be less than RELAY_LEASE_MS (30000 ms): a row must stay leased while the drain may still publish or mark it, or another relay publishes it twice",
    ]);
  });
});

describe("relay command line", () => {
  const relay = (...args: string[]) => runEntryPoint("apps/relay/src/main.ts", args);
  const programUsage =
    /^usage: relay \[run\] +publish .*\n +relay status \[--json\] +.*\n +relay requeue-dead \[--id ID\] +.*\n +relay skip-dead \[--id ID\] +/;

  it("--help and -h print the usage on stdout and exit 0, for the program and each command", async () => {
    const [help, h, run, status, requeue, skip] = await Promise.all([
      relay("--help"),
      relay("-h"),
      relay("run", "--help"),
      relay("status", "-h"),
      relay("requeue-dead", "--help"),
      relay("skip-dead", "--help"),
    ]);
    expectAnswer(help, programUsage);
    expectAnswer(h, programUsage);
    expectAnswer(run, /^usage: relay \[run\]\n\npublish the outbox to SNS until SIGTERM\n[\s\S]*exits 78/);
    expectAnswer(status, /^usage: relay status \[--json\]\n[\s\S]*--json +one JSON object/);
    expectAnswer(
      requeue,
      /^usage: relay requeue-dead \[--id ID\] \[--include-skipped\] \[--out-of-order\]\n[\s\S]*--id ID +only the dead row/,
    );
    expectAnswer(skip, /^usage: relay skip-dead \[--id ID\]\n[\s\S]*--id ID +only the dead row/);
  });

  it("status and requeue-dead --help end with every variable they read, from the spec they parse", async () => {
    const environment = (settings: Record<string, { env: string }>) =>
      [
        "Reads only these variables; invalid configuration exits 78 after listing every problem:",
        ...Object.values(settings).map((definition) => `  ${definition.env}`),
      ].join("\n");
    expect(Object.values(commandSettings).map((definition) => definition.env)).toEqual(
      expect.arrayContaining(["DATABASE_URL", "DB_SSL_MODE", "DB_SSL_CA_FILE"]),
    );
    // requeue-dead reads RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS besides (claim-check-age.ts).
    expect(Object.keys(requeueDeadSettings)).toEqual([
      ...Object.keys(commandSettings),
      "claimCheckSendWithinHours",
    ]);
    const [status, requeue] = await Promise.all([relay("status", "--help"), relay("requeue-dead", "-h")]);
    for (const [help, settings] of [
      [status, commandSettings],
      [requeue, requeueDeadSettings],
    ] as const) {
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout.endsWith(`\n\n${environment(settings)}\n`), help.stdout).toBe(true);
    }
  });

  it("--version prints the package version and exits 0", async () => {
    expectAnswer(await relay("--version"), new RegExp(`^${versionOf("apps/relay/package.json")}\n$`));
  });

  it("a usage error prints the reason and the usage on stderr and exits 64", async () => {
    const [command, flag, statusFlag, argument, id] = await Promise.all([
      relay("publish"),
      relay("--verbose"),
      relay("status", "--csv"),
      relay("run", "now"),
      relay("requeue-dead", "--id", "42"),
    ]);
    // Shaped like a UUID is not one: Postgres would refuse it (22P02) after the database was opened.
    const [dashes, feb30] = await Promise.all([
      relay("skip-dead", `--id=${"-".repeat(36)}`),
      relay("republish", "--from", "2026-02-30T10:00:00Z", "--allow-reapply"),
    ]);
    expectUsageError(
      dashes,
      `--id needs an event id (a UUID), got "${"-".repeat(36)}"`,
      /^usage: relay skip-dead/,
    );
    // Date.parse rolls it over to March 2nd; Postgres refuses it (22008).
    expectUsageError(
      feb30,
      '--from needs a timestamp with its zone, e.g. 2026-12-01T10:00:00Z, got "2026-02-30T10:00:00Z"',
      /^usage: relay republish/,
    );
    expectUsageError(command, "unknown command: publish", programUsage);
    expectUsageError(flag, "Unknown option '--verbose'", programUsage);
    expectUsageError(statusFlag, "Unknown option '--csv'", /^usage: relay status \[--json\]\n/);
    expectUsageError(argument, "unexpected argument: now", /^usage: relay \[run\]\n/);
    expectUsageError(id, '--id needs an event id (a UUID), got "42"', /^usage: relay requeue-dead/);
  });
});

describe("relay CLI", () => {
  let url: string;
  let handle: DatabaseHandle;
  beforeAll(async () => {
    ({ url, handle } = await migratedDatabase("relay_cli"));
  });
  afterAll(() => handle.close(5_000));

  const cli = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    run(process.execPath, ["--import", "tsx", "--conditions=development", mainPath, ...args], {
      env: { ...process.env, DATABASE_URL: url },
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        stdout: error.stdout,
        stderr: error.stderr,
      }),
    );

  it("status reports unsent, dead and the oldest unsent age per topic, as JSON or as a table", async () => {
    await enqueueAll(handle, [...events("orders", 3), ...events("billing", 2)]);
    await sql`UPDATE outbox SET dead_at = now(), last_error = 'x' WHERE seq = (SELECT min(seq) FROM outbox)`.execute(
      handle.db,
    );
    const json = await cli(["status", "--json"]);
    const report = JSON.parse(json.stdout) as {
      total: { unsent: number; dead: number; oldestUnsentAgeSeconds: number };
      topics: { topic: string; unsent: number; dead: number }[];
    };
    expect(report.total).toMatchObject({ unsent: 4, dead: 1 });
    expect(report.total.oldestUnsentAgeSeconds).toBeGreaterThanOrEqual(0);
    expect(report.topics.map(({ topic, unsent, dead }) => ({ topic, unsent, dead }))).toEqual([
      { topic: "billing", unsent: 2, dead: 0 },
      { topic: "orders", unsent: 2, dead: 1 },
    ]);
    const table = await cli(["status"]);
    expect(table.stdout).toMatch(/^TOPIC\s+UNSENT\s+DEAD\s+BLOCKED KEYS\s+OLDEST UNSENT\n/);
    // The dead row has no ordering key: it holds none back.
    expect(table.stdout).toMatch(/\(all\)\s+4\s+1\s+0\s/);
    expect(table.stdout).not.toMatch(/BLOCKED KEY\s+TOPIC/);

    // A keyed dead row blocks its key: counted per topic, and listed with what waits behind it.
    const [keyed] = await enqueueAll(handle, [
      ...events("orders", 3, 1).map((event) => ({ ...event, orderingKey: "customer-7" })),
    ]);
    await sql`UPDATE outbox SET dead_at = now(), last_error = 'refused' WHERE id = ${keyed}`.execute(
      handle.db,
    );
    const blocked = JSON.parse((await cli(["status", "--json"])).stdout) as {
      total: { blockedKeys: number };
      blockedKeys: unknown[];
    };
    expect(blocked.total.blockedKeys).toBe(1);
    expect(blocked.blockedKeys).toEqual([
      { topic: "orders", orderingKey: "customer-7", eventId: keyed, lastError: "refused", waiting: 2 },
    ]);
    expect((await cli(["status"])).stdout).toMatch(
      new RegExp(
        `\nBLOCKED KEY\\s+TOPIC\\s+DEAD EVENT\\s+WAITING\\s+LAST ERROR\ncustomer-7\\s+orders\\s+${keyed}\\s+2\\s+refused\n`,
      ),
    );

    // A key and an error are whatever a producer and the bus said: a terminal never acts on them.
    const [hostile] = await enqueueAll(handle, events("orders", 1, 0, 9));
    await sql`UPDATE outbox SET ordering_key = ${"\u001b]52;c;cHduZWQ=\u0007key"}, dead_at = now(),
                last_error = ${`refused\n\u001b[2J${"x".repeat(200)}`}
              WHERE id = ${hostile}`.execute(handle.db);
    const shown = (await cli(["status"])).stdout;
    expect(shown).not.toContain("\u001b");
    expect(shown).not.toContain("\u0007");
    expect(shown).toContain("\\x1b]52;c;cHduZWQ=\\x07key");
    expect(shown).toContain("refused\\x0a\\x1b[2J");
    expect(shown).not.toContain("x".repeat(100));
  });

  it("status --json escapes C1 and bidi controls as the tables do (JSON.stringify escapes C0 only)", async () => {
    await sql`TRUNCATE outbox`.execute(handle.db);
    const [hostile] = await enqueueAll(handle, events("orders", 1));
    // A C1 CSI (U+009B) acts as ESC [ on many terminals; U+202E reverses what follows.
    await sql`UPDATE outbox SET ordering_key = ${"\u009b2Jkey\u202e"}, last_error = ${"\u009b31m"},
                dead_at = now()
              WHERE id = ${hostile}`.execute(handle.db);
    const json = (await cli(["status", "--json"])).stdout;
    expect(json).not.toMatch(/[\u0080-\u009f\u202e]/);
    const { blockedKeys } = JSON.parse(json) as { blockedKeys: unknown[] };
    expect(blockedKeys).toEqual([
      expect.objectContaining({ orderingKey: "\\x9b2Jkey\\u{202e}", lastError: "\\x9b31m" }),
    ]);
  });

  it("requeue-dead gives dead rows a fresh start, all or by --id", async () => {
    await sql`TRUNCATE outbox`.execute(handle.db);
    const ids = await enqueueAll(handle, events("orders", 3));
    await sql`UPDATE outbox SET dead_at = now(), attempts = 10, available_at = now() + interval '1 hour'`.execute(
      handle.db,
    );
    const one = await cli(["requeue-dead", "--id", ids[1] ?? ""]);
    expect(JSON.parse(one.stdout)).toEqual({ requeued: 1 });
    const again = await cli(["requeue-dead", "--id", ids[1] ?? ""]);
    expect(again.code).toBe(1);
    const rest = await cli(["requeue-dead"]);
    expect(JSON.parse(rest.stdout)).toEqual({ requeued: 2 });
    const rows = await handle.db
      .selectFrom("outbox")
      .select(["attempts", "dead_at"])
      .where("available_at", "<=", new Date())
      .execute();
    expect(rows).toEqual([
      { attempts: 0, dead_at: null },
      { attempts: 0, dead_at: null },
      { attempts: 0, dead_at: null },
    ]);
  });

  it("requeue-dead keeps a key's order: a skipped row whose key sent later events stays dead unless --out-of-order", async () => {
    await sql`TRUNCATE outbox`.execute(handle.db);
    const keyed = (key: string) => events("orders", 2).map((event) => ({ ...event, orderingKey: key }));
    // K: e1 dead, e2 behind it. L: e3 dead, e4 behind it, never published.
    const [e1 = "", e2 = "", e3 = "", e4 = ""] = await enqueueAll(handle, [...keyed("K"), ...keyed("L")]);
    await sql`UPDATE outbox SET dead_at = now(), attempts = 5, last_error = 'x' WHERE id IN (${e1}, ${e3})`.execute(
      handle.db,
    );
    // The relay's own claim: e2 waits behind e1 until the skip, then goes out.
    expect(await claimBatch(handle.db, "test-relay", 10, 30_000)).toEqual([]);
    expect(JSON.parse((await cli(["skip-dead", "--id", e1])).stdout)).toEqual({ skipped: 1 });
    expect(JSON.parse((await cli(["skip-dead", "--id", e3])).stdout)).toEqual({ skipped: 1 });
    const claimed = await claimBatch(handle.db, "test-relay", 10, 30_000);
    expect(claimed.map((row) => row.id).sort()).toEqual([e2, e4].sort());
    await markPublished(handle.db, [e2]);
    // e4 is still leased (in flight): L's order is as much at stake as K's.
    await sql`UPDATE outbox SET locked_until = NULL, locked_by = NULL WHERE id = ${e4}`.execute(handle.db);

    // Every dead row: the skipped ones are left out unless asked.
    const all = await cli(["requeue-dead"]);
    expect({ code: all.code, out: JSON.parse(all.stdout) }).toEqual({ code: 0, out: { requeued: 0 } });
    expect(all.stderr).toContain("2 skipped dead rows left out");
    // Asked: e3 goes (nothing of L went out: it is sent before e4); e1 stays dead, e2 named.
    const included = await cli(["requeue-dead", "--include-skipped"]);
    expect(JSON.parse(included.stdout)).toEqual({ requeued: 1 });
    expect(included.stderr).toContain(
      `${e1} left dead: its key already sent later events while it was skipped (${e2})`,
    );
    expect(included.stderr).toContain("--out-of-order");
    // Named alone: refused the same way, exit 1.
    const named = await cli(["requeue-dead", "--id", e1]);
    expect({ code: named.code, out: JSON.parse(named.stdout) }).toEqual({ code: 1, out: { requeued: 0 } });
    expect(named.stderr).toContain(`(${e2})`);
    const rows = await handle.db.selectFrom("outbox").select(["id", "dead_at", "skipped_at"]).execute();
    expect(rows.find((row) => row.id === e1)).toMatchObject({ dead_at: expect.any(Date) });
    expect(rows.find((row) => row.id === e3)).toMatchObject({ dead_at: null, skipped_at: null });
    // L's order is kept: e3 comes before e4.
    expect((await claimBatch(handle.db, "test-relay", 10, 30_000)).map((row) => row.id)).toEqual([e3, e4]);

    // Accepted out of order: e1 goes, after e2.
    const accepted = await cli(["requeue-dead", "--id", e1, "--out-of-order"]);
    expect(JSON.parse(accepted.stdout)).toEqual({ requeued: 1 });
    expect((await claimBatch(handle.db, "test-relay", 10, 30_000)).map((row) => row.id)).toEqual([e1]);
  });

  it("status shows the scheduled events not due yet, their count and the earliest due time", async () => {
    await sql`TRUNCATE outbox`.execute(handle.db);
    const none = JSON.parse((await cli(["status", "--json"])).stdout) as { scheduled: unknown };
    expect(none.scheduled).toEqual({ events: 0, earliestDueAt: null });
    expect((await cli(["status"])).stdout).toMatch(/\nscheduled, not due yet: 0\n/);

    const soonest = new Date(Date.now() + 3_600_000);
    await enqueueAll(handle, [
      { ...events("orders", 1)[0], deliverAt: soonest } as NewEvent,
      { ...events("orders", 1)[0], deliverAt: new Date(soonest.getTime() + 60_000) } as NewEvent,
      { ...events("billing", 1)[0], delayMs: 7_200_000 } as NewEvent,
      { ...events("billing", 1)[0], deliverAt: new Date(Date.now() - 60_000) } as NewEvent,
    ]);
    // Enqueued an hour ago: the past-due row is a minute late, and the scheduled ones are not late.
    await sql`UPDATE outbox SET created_at = now() - interval '1 hour'`.execute(handle.db);
    const report = JSON.parse((await cli(["status", "--json"])).stdout) as {
      total: { unsent: number; oldestUnsentAgeSeconds: number };
      topics: { topic: string; oldestUnsentAgeSeconds: number | null }[];
      scheduled: { events: number; earliestDueAt: string };
    };
    // Scheduled events are unsent too; the one already due is not scheduled any more.
    expect(report.total.unsent).toBe(4);
    expect(report.scheduled).toEqual({ events: 3, earliestDueAt: soonest.toISOString() });
    expect(report.total.oldestUnsentAgeSeconds).toBeGreaterThanOrEqual(60);
    expect(report.total.oldestUnsentAgeSeconds).toBeLessThan(3_600);
    expect(report.topics.find((topic) => topic.topic === "orders")?.oldestUnsentAgeSeconds).toBeNull();
    expect((await cli(["status"])).stdout).toMatch(
      new RegExp(`\nscheduled, not due yet: 3, the earliest due at ${soonest.toISOString()}\n`),
    );
  });
});
