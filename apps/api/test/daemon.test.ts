import { type EquipmentStub, startEquipmentStub } from "@outbox/devstack";
import {
  apiPort,
  configRefusal,
  DaemonFleet,
  expectAnswer,
  expectUsageError,
  hangLimit,
  runEntryPoint,
  versionOf,
  waitUntil,
} from "@outbox/test-kit";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { reconcileSettings } from "../src/cli/reconcile.js";
import type { DatabaseHandle } from "./photo-database.js";
import { createMigratedTestDatabase } from "./photo-database.js";
import { connectOutcome, rawConnection } from "./raw-connection.js";

// Its tests start up to 3 programs one after another: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 3 }) });

const ENTRY = "apps/api/src/main.ts";

const NO_SUCH_PHOTO = "/photos/0190c2a4-0000-7000-8000-00000000ff01";

describe("api daemon configuration", () => {
  it("refuses unparsable settings with exit 78, one line per problem", async () => {
    expect(await configRefusal(ENTRY, { DATABASE_URL: "", API_PORT: "http", API_EQUIPMENT_URL: "" })).toEqual(
      [
        "api: config error: DATABASE_URL: is required",
        'api: config error: API_PORT: expected a whole number (got "http")',
        "api: config error: API_EQUIPMENT_URL: is required",
      ],
    );
  });

  it("refuses an inverted timeout hierarchy, listing every broken rule", async () => {
    expect(
      await configRefusal(ENTRY, {
        DATABASE_URL: "postgres://nobody@127.0.0.1:1/unused",
        API_EQUIPMENT_URL: "http://127.0.0.1:1",
        API_KEEP_ALIVE_TIMEOUT_MS: "50000",
        API_EQUIPMENT_TIMEOUT_MS: "30000",
        API_HANDLER_TIMEOUT_MS: "28000",
      }),
    ).toEqual([
      "api: config error: API_HANDLER_TIMEOUT_MS: 28000 must not exceed API_DRAIN_TIMEOUT_MS (25000): a request that arrived just before SIGTERM must be able to finish within the drain",
      "api: config error: API_EQUIPMENT_TIMEOUT_MS: 30000 ms must be less than API_HANDLER_TIMEOUT_MS (28000 ms): a downstream call must give up while the request can still answer",
      "api: config error: API_LB_IDLE_TIMEOUT_MS: 60000 ms must be less than API_KEEP_ALIVE_TIMEOUT_MS (50000 ms): the load balancer must close an idle connection first, or it reuses one the server just closed (sporadic 502)",
    ]);
  });
});

describe("api configuration: every problem, every time", () => {
  const base = {
    DATABASE_URL: "postgres://nobody@127.0.0.1:1/unused",
    API_EQUIPMENT_URL: "http://127.0.0.1:1",
  };
  const stopBudget =
    "api: config error: API_DRAIN_TIMEOUT_MS: 27000 ms + SHUTDOWN_OVERHEAD_MS (4000 ms) = 31000 ms must be less than STOP_TIMEOUT_MS (30000 ms): the drain must end before the platform's SIGKILL";

  it("a check across settings and an inverted stop budget: both lines, exit 78", async () => {
    const lines = await configRefusal(ENTRY, {
      ...base,
      API_RECONCILE_BACKOFF_BASE_MS: "700000",
      API_DRAIN_TIMEOUT_MS: "27000",
    });
    expect(lines).toEqual([
      "api: config error: API_RECONCILE_BACKOFF_BASE_MS: 700000 must not exceed API_RECONCILE_BACKOFF_MAX_MS (600000)",
      stopBudget,
    ]);
  });

  it("an unparsable variable and an inverted drain budget: both lines, exit 78", async () => {
    const lines = await configRefusal(ENTRY, { ...base, API_PORT: "http", API_DRAIN_TIMEOUT_MS: "27000" });
    expect(lines).toEqual(['api: config error: API_PORT: expected a whole number (got "http")', stopBudget]);
  });
});

describe("api reconcile configuration: the daemon's checks, the daemon's message", () => {
  const reconcile = (env: Record<string, string>) =>
    configRefusal(ENTRY, { API_EQUIPMENT_URL: "http://127.0.0.1:1", ...env }, ["reconcile"]);
  const url = "postgres://nobody@127.0.0.1:1/unused";

  it("lists an unparsable variable, unusable TLS settings and a backoff base above its cap together", async () => {
    expect(
      await reconcile({
        DATABASE_URL: url,
        DB_SSL_MODE: "verify-full",
        DB_SSL_CA_FILE: "/nonexistent/ca.pem",
        API_RECONCILE_BATCH_SIZE: "0",
        API_RECONCILE_BACKOFF_BASE_MS: "700000",
      }),
    ).toEqual([
      'api reconcile: config error: API_RECONCILE_BATCH_SIZE: must be between 1 and 1000 (got "0")',
      "api reconcile: config error: DB_SSL_CA_FILE: cannot read /nonexistent/ca.pem (ENOENT), which DB_SSL_MODE=verify-full needs",
      "api reconcile: config error: API_RECONCILE_BACKOFF_BASE_MS: 700000 must not exceed API_RECONCILE_BACKOFF_MAX_MS (600000)",
    ]);
  });

  it("reads DB_SSL_MODE: an unknown mode and the URL's own TLS parameter, both lines", async () => {
    expect(await reconcile({ DATABASE_URL: `${url}?sslcert=/client.pem`, DB_SSL_MODE: "verify-ca" })).toEqual(
      [
        'api reconcile: config error: DB_SSL_MODE: expected one of auto, disable, require, verify-full (got "verify-ca")',
        "api reconcile: config error: DATABASE_URL: the URL's sslcert parameter is not used: TLS is set by DB_SSL_MODE and DB_SSL_CA_FILE (remove it from the URL)",
      ],
    );
  });
});

describe("api command line", () => {
  const api = (...args: string[]) => runEntryPoint(ENTRY, args);
  const programUsage =
    /^usage: api \[run\] +serve the photo service until SIGTERM\n +api reconcile +one pass/;

  it("--help and -h print the usage on stdout and exit 0, for the program and each command", async () => {
    const [help, h, run, reconcile] = await Promise.all([
      api("--help"),
      api("-h"),
      api("run", "-h"),
      api("reconcile", "--help"),
    ]);
    expectAnswer(help, programUsage);
    expectAnswer(h, programUsage);
    expectAnswer(run, /^usage: api \[run\]\n\nserve the photo service until SIGTERM\n[\s\S]*exits 78/);
    expectAnswer(reconcile, /^usage: api reconcile\n\none pass of the gear link reconciliation job/);
    // Every variable the command reads, TLS included, from the spec it parses.
    expect(reconcile.stdout).toContain(
      [
        "Reads only these variables; invalid configuration exits 78 after listing every problem:",
        ...Object.values(reconcileSettings).map((definition) => `  ${definition.env}`),
      ].join("\n"),
    );
    expect(reconcile.stdout).toMatch(/^ {2}DB_SSL_MODE$/m);
    expect(reconcile.stdout).toMatch(/^ {2}DB_SSL_CA_FILE$/m);
  });

  it("--version prints the package version and exits 0", async () => {
    expectAnswer(await api("--version"), new RegExp(`^${versionOf("apps/api/package.json")}\n$`));
  });

  it("a usage error prints the reason and the usage on stderr and exits 64", async () => {
    const [command, flag, reconcileFlag] = await Promise.all([
      api("status"),
      api("--port", "8080"),
      api("reconcile", "--all"),
    ]);
    expectUsageError(command, "unknown command: status", programUsage);
    expectUsageError(flag, "Unknown option '--port'", programUsage);
    expectUsageError(reconcileFlag, "Unknown option '--all'", /^usage: api reconcile\n/);
  });
});

describe("api daemon stop", () => {
  let database: DatabaseHandle;
  let url: string;
  let stub: EquipmentStub;
  // A failed expectation must not leave a daemon behind.
  const fleet = new DaemonFleet();
  const daemonEnv = (overrides: Record<string, string> = {}): Record<string, string> => ({
    DATABASE_URL: url,
    LOG_LEVEL: "info",
    API_HOST: "127.0.0.1",
    API_PORT: "0",
    API_EQUIPMENT_URL: stub.url,
    ...overrides,
  });
  beforeAll(async () => {
    ({ url, handle: database } = await createMigratedTestDatabase("api_daemon", {
      service: "api-test",
      poolMax: 2,
    }));
    stub = await startEquipmentStub();
  });
  afterAll(async () => {
    await fleet.killAll();
    await stub.close();
    await database.close(5_000);
  });

  it("still reads a renamed variable by its former name for one release, and warns at start-up", async () => {
    const { API_EQUIPMENT_URL: equipmentUrl, ...current } = daemonEnv();
    const api = fleet.api("api-former-names", { ...current, EQUIPMENT_URL: equipmentUrl as string });
    const warning = await api.waitForLog("deprecated variable name: rename it; read for one more release");
    expect(warning).toMatchObject({
      level: "warn",
      variable: "EQUIPMENT_URL",
      renamedTo: "API_EQUIPMENT_URL",
    });
    await api.waitForLog("started");
    await api.stop("SIGTERM");
    expect((await api.exited).code).toBe(0);
  });

  it("on SIGTERM finishes the requests in flight, closes their connections, then the pool; exit 0", async () => {
    const api = fleet.apiHoldingCommits("api", daemonEnv(), 1_500);
    const base = `http://127.0.0.1:${await apiPort(api)}`;
    const opsPort = Number((await api.waitForLog("started")).opsPort);
    const requests = Array.from({ length: 3 }, (_, index) =>
      fetch(`${base}/photos`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: `in flight ${index}`, gearIds: ["g"] }),
      }),
    );
    await waitUntil(
      "3 requests in flight",
      async () => {
        const metrics = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
        return /^api_http_requests_in_flight\{[^}]*\} 3$/m.test(metrics);
      },
      { alive: [api] },
    );
    const stopping = api.stop("SIGTERM");
    const responses = await Promise.all(requests);
    expect(responses.map((response) => response.status)).toEqual([201, 201, 201]);
    expect(responses.map((response) => response.headers.get("connection"))).toEqual([
      "close",
      "close",
      "close",
    ]);
    expect((await stopping).code).toBe(0);

    const complete = api.lines.find((line) => line.msg === "graceful shutdown complete");
    expect(complete).toMatchObject({ clean: true, inFlightAtStop: 3, drained: 3, cut: 0 });
    const order = [
      "graceful shutdown complete",
      "drained",
      "ops server closed",
      "database pool closed",
      "exit",
    ];
    expect(api.lines.map((line) => line.msg).filter((msg) => order.includes(msg ?? ""))).toEqual(order);
    const committed = await database.db
      .selectFrom("outbox")
      .select((eb) => eb.fn.countAll<string>().as("events"))
      .where("event_type", "=", "photo.posted")
      .executeTakeFirstOrThrow();
    expect(Number(committed.events)).toBe(3);
  });

  /**
   * Holds `photos` in SHARE mode until released: every POST waits at its insert, in flight, for as
   * long as the test needs (its own deadline is the hang-catcher); a GET reads past it.
   */
  async function holdPosts(): Promise<{ release(): Promise<void> }> {
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked = () => {};
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const held = database.db.transaction().execute(async (trx) => {
      // Longer than the handle's 10 s idle-in-transaction limit: the drain test holds past it.
      await sql`SET LOCAL idle_in_transaction_session_timeout = '120s'`.execute(trx);
      await sql`LOCK TABLE photos IN SHARE MODE`.execute(trx);
      locked();
      await released;
    });
    await Promise.race([isLocked, held]);
    return {
      async release() {
        release();
        await held;
      },
    };
  }

  it("on SIGTERM refuses new connections and serves a request on a connection opened before, with Connection: close", async () => {
    const posts = await holdPosts();
    try {
      const api = fleet.api("api-stop-accepting", daemonEnv());
      const port = await apiPort(api);
      const opsPort = Number((await api.waitForLog("started")).opsPort);
      const held = fetch(`http://127.0.0.1:${port}/photos`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: "keeps the stop draining", gearIds: [] }),
      });
      await waitUntil(
        "the POST in flight",
        async () => {
          const metrics = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
          return /^api_http_requests_in_flight\{[^}]*\} 1$/m.test(metrics);
        },
        { alive: [api] },
      );
      // Kept alive by a first answer; the next request's head is under way when SIGTERM lands.
      const open = await rawConnection(port);
      open.write(`GET ${NO_SUCH_PHOTO} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      const before = await open.answer();
      expect(before).toMatch(/^HTTP\/1\.1 404 /);
      expect(before.toLowerCase()).toContain("connection: keep-alive");
      open.write(`GET ${NO_SUCH_PHOTO} HTTP/1.1\r\n`);

      const stopping = api.stop("SIGTERM");
      await api.waitForLog("draining");
      // The listener closes as the drain begins; polled, since no line says so.
      await expect.poll(() => connectOutcome(port), { timeout: 30_000 }).toBe("refused");

      open.write("Host: 127.0.0.1\r\n\r\n");
      const during = await open.answer();
      // Served, not failed with a 503: its client sent it before it could know.
      expect(during).toMatch(/^HTTP\/1\.1 404 /);
      expect(during.toLowerCase()).toContain("connection: close");
      expect(await open.closed).toBe("");

      await posts.release();
      const response = await held;
      expect([response.status, response.headers.get("connection")]).toEqual([201, "close"]);
      expect((await stopping).code).toBe(0);
      expect(api.lines.find((line) => line.msg === "graceful shutdown complete")).toMatchObject({
        clean: true,
        inFlightAtStop: 1,
        drained: 2,
        cut: 0,
      });
    } finally {
      await posts.release();
    }
  });

  it("warns when the drain deadline cuts a request, with how many and how long it waited", async () => {
    // The handler's cap equals the drain: only a request that arrived after SIGTERM can outlast
    // the drain — one that reached a connection still open.
    const drainMs = 10_000;
    const posts = await holdPosts();
    try {
      const api = fleet.api(
        "api-drain-cut",
        daemonEnv({
          API_DRAIN_TIMEOUT_MS: String(drainMs),
          API_HANDLER_TIMEOUT_MS: String(drainMs),
          API_EQUIPMENT_TIMEOUT_MS: "5000",
        }),
      );
      const port = await apiPort(api);
      const open = await rawConnection(port);
      open.write(`GET ${NO_SUCH_PHOTO} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      expect(await open.answer()).toMatch(/^HTTP\/1\.1 404 /);
      open.write("POST /photos HTTP/1.1\r\nHost: 127.0.0.1\r\n");

      const stopping = api.stop("SIGTERM");
      await api.waitForLog("draining");
      const body = JSON.stringify({ title: "arrives during the stop", gearIds: [] });
      // Its deadline, set on arrival, ends after the drain's: the drain deadline cuts it first.
      open.write(`content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
      expect(await open.closed).toBe("");
      expect((await stopping).code).toBe(0);

      const warning = api.lines.find(
        (line) => line.msg === "graceful shutdown cut requests at the drain deadline",
      );
      expect(warning, JSON.stringify(api.lines.slice(-6))).toMatchObject({
        level: "warn",
        clean: false,
        inFlightAtStop: 0,
        drained: 0,
        cut: 1,
      });
      // By the daemon's own clock, the drain ran its whole deadline before the cut.
      expect(Number(api.lines.find((line) => line.msg === "drained")?.drainMs)).toBeGreaterThanOrEqual(
        drainMs,
      );
    } finally {
      await posts.release();
    }
  });

  it("reconcile: one pass as a one-shot command links what is due, then exits 0", async () => {
    const photoId = "0190c2a4-0000-7000-8000-00000000bb01";
    await database.db.insertInto("photos").values({ id: photoId, title: "pending" }).execute();
    await database.db
      .insertInto("photo_gear_links")
      .values({ photo_id: photoId, gear_ids: JSON.stringify(["lens"]), state: "pending" })
      .execute();
    const job = fleet.api("api reconcile", daemonEnv(), ["reconcile"]);
    const exit = await job.exited;
    expect(exit.code, job.stderr()).toBe(0);
    expect(job.lines.find((line) => line.msg === "reconciliation done")).toMatchObject({
      attempted: 1,
      linked: 1,
      failed: 0,
    });
    expect(stub.linkedPhotos().get(photoId)).toEqual(["lens"]);
    const link = await database.db
      .selectFrom("photo_gear_links")
      .select("state")
      .where("photo_id", "=", photoId)
      .executeTakeFirstOrThrow();
    expect(link.state).toBe("linked");
  });
});
