import { randomUUID } from "node:crypto";
import { Deadline } from "@outbox/client";
import { type EquipmentStub, startEquipmentStub } from "@outbox/devstack";
import { commonSettings, connectionsCheckingInterval, createLogger, sleep } from "@outbox/shared";
import { sql } from "kysely";
import { Registry } from "prom-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { apiSettings, createApiMetrics, createPhotoServer, type PhotoServer } from "../src/index.js";
import { createDatabase, createMigratedTestDatabase, type DatabaseHandle } from "./photo-database.js";
import { errorMessage, rawConnection, startTestPhotoServer } from "./photo-server.js";

// The source document's timeout table at its DEFAULT values, each row seen from outside the server
// the way a client or the platform meets it (docs/api.md, "The timeout table, row by row").
// timeout-table.test.ts has the same rows at test-sized values; these wait for the real ones, so
// they run in the slow suite (vitest.slow.config.ts), beside the main one.
/** A setting's default, the value these tests are about. */
function defaultOf(setting: { readonly env: string; readonly default: number | undefined }): number {
  if (setting.default === undefined) throw new Error(`${setting.env} has no default`);
  return setting.default;
}
const HEADERS_TIMEOUT_MS = defaultOf(apiSettings.headersTimeoutMs);
const HANDLER_TIMEOUT_MS = defaultOf(apiSettings.handlerTimeoutMs);
const REQUEST_TIMEOUT_MS = defaultOf(apiSettings.requestTimeoutMs);
const KEEP_ALIVE_TIMEOUT_MS = defaultOf(apiSettings.keepAliveTimeoutMs);
const POOL_MAX = defaultOf(commonSettings.dbPoolMax);
/** A second past the load balancer's idle timeout (60 s), the longest it may leave a connection idle. */
const LOAD_BALANCER_REUSE_MS = defaultOf(apiSettings.loadBalancerIdleTimeoutMs) + 1_000;
/**
 * How late a close or an answer may come on a loaded machine: a timer that fires while the event
 * loop is busy, and the main suite running on the same cores. These tests sleep through their
 * bounds, so CPU does not decide them; the slack only keeps a late timer from failing them, and is
 * far below what the next bound up (or no bound at all) would take.
 */
const SLACK_MS = 5_000;

const POOL_SERVICE = "api-defaults";
let url: string;
let database: DatabaseHandle;
let stub: EquipmentStub;
const servers: PhotoServer[] = [];
beforeAll(async () => {
  // The pool at its default size: the pool row is about it.
  ({ url, handle: database } = await createMigratedTestDatabase("api_defaults", {
    service: POOL_SERVICE,
    poolMax: POOL_MAX,
  }));
  stub = await startEquipmentStub();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop(Deadline.after(5_000))));
});
afterAll(async () => {
  await stub.close();
  await database.close(5_000);
});

/** The server at every default, each POST holding its transaction `commitDelayMs` before the commit. */
async function start(commitDelayMs = 0) {
  const started = await startTestPhotoServer(database, stub, {
    headersTimeoutMs: HEADERS_TIMEOUT_MS,
    handlerTimeoutMs: HANDLER_TIMEOUT_MS,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
    commitDelayMs,
  });
  servers.push(started.server);
  return started;
}

function post(baseUrl: string, title: string): Promise<Response> {
  return fetch(`${baseUrl}/photos`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ title, gearIds: [] }),
  });
}

async function photosTitled(title: string): Promise<number> {
  return (await database.db.selectFrom("photos").select("id").where("title", "=", title).execute()).length;
}

describe("the timeout table at its default values, from outside", () => {
  it(
    `server ReadHeaderTimeout: a slow sender gets 408 at ${HEADERS_TIMEOUT_MS} ms, not before`,
    async () => {
      const { port } = await start();
      const client = await rawConnection(port);
      client.write("POST /photos HTTP/1.1\r\nHost: 127.0.0.1\r\n");
      // One header byte every half second: the connection is never idle, its head never complete.
      const trickle = setInterval(() => client.write("X"), 500);
      const answer = await client.answer.finally(() => clearInterval(trickle));
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(errorMessage(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)))).toMatch(
        /^the request did not arrive in time: its headers must come within 5000 ms/,
      );
      expect(client.closedAfterMs()).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS);
      // Node looks for expired heads once per checking interval (a fifth of the timeout, 1 s).
      expect(client.closedAfterMs()).toBeLessThan(
        HEADERS_TIMEOUT_MS + connectionsCheckingInterval(HEADERS_TIMEOUT_MS) + SLACK_MS,
      );
    },
    HEADERS_TIMEOUT_MS + SLACK_MS * 3,
  );

  it(
    `the handler's bound: work that outlasts it is answered 504 at ${HANDLER_TIMEOUT_MS} ms, not before, and nothing is written`,
    async () => {
      // Every POST holds its transaction open far beyond the request's deadline.
      const { baseUrl } = await start(REQUEST_TIMEOUT_MS * 2);
      const title = `outlasts-${randomUUID()}`;
      const startedAt = performance.now();
      const response = await post(baseUrl, title);
      const answeredAfterMs = performance.now() - startedAt;
      expect(response.status).toBe(504);
      expect(errorMessage(await response.json())).toMatch(/^deadline exceeded/);
      expect(answeredAfterMs).toBeGreaterThanOrEqual(HANDLER_TIMEOUT_MS);
      expect(answeredAfterMs).toBeLessThan(HANDLER_TIMEOUT_MS + SLACK_MS);
      expect(await photosTitled(title)).toBe(0);
    },
    HANDLER_TIMEOUT_MS + SLACK_MS * 3,
  );

  it(
    `server WriteTimeout: a handler that ignores its deadline has its connection ended at ${REQUEST_TIMEOUT_MS} ms, not before`,
    async () => {
      const server = createPhotoServer({
        pool: database.pool,
        postPhoto: () => new Promise(() => {}),
        metrics: createApiMetrics(new Registry(), database.db),
        log: createLogger({
          service: "api-test",
          version: "0",
          level: process.env.TEST_LOG_LEVEL ?? "silent",
        }),
      });
      servers.push(server);
      const port = await server.listen("127.0.0.1", 0);
      const client = await rawConnection(port);
      const body = JSON.stringify({ title: "never answered", gearIds: [] });
      client.write(
        `POST /photos HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      );
      // No answer at all (the deadline's 504 needs a handler that heeds it): the connection ends.
      expect(await client.answer).toBe("");
      expect(client.closedAfterMs()).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS);
      expect(client.closedAfterMs()).toBeLessThan(REQUEST_TIMEOUT_MS + SLACK_MS);
    },
    REQUEST_TIMEOUT_MS + SLACK_MS * 3,
  );

  it(
    `server IdleTimeout: an idle keep-alive connection is still served at ${LOAD_BALANCER_REUSE_MS / 1_000} s, and closed at ${KEEP_ALIVE_TIMEOUT_MS / 1_000} s`,
    async () => {
      const { port } = await start();
      const reused = await rawConnection(port);
      const idle = await rawConnection(port);
      const get = (connection: "keep-alive" | "close") =>
        `GET /photos/${randomUUID()} HTTP/1.1\r\nHost: 127.0.0.1\r\nconnection: ${connection}\r\n\r\n`;
      reused.write(get("keep-alive"));
      idle.write(get("keep-alive"));
      // After the load balancer's own idle timeout, when it may still reuse the connection: served.
      await sleep(LOAD_BALANCER_REUSE_MS);
      reused.write(get("close"));
      const served = await reused.answer;
      expect(served.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 404", "HTTP/1.1 404"]);
      expect(served).toMatch(new RegExp(`\r\nkeep-alive: timeout=${KEEP_ALIVE_TIMEOUT_MS / 1_000}\r\n`, "i"));

      const answer = await idle.answer;
      expect(answer).toMatch(/^HTTP\/1\.1 404 /);
      // Idle from its answer's last byte to the server's close. The client's clock starts once its
      // event loop has read the answer, a little after the server's: a tenth of a second is allowed.
      const idleMs = idle.closedAfterMs() - idle.lastDataAfterMs();
      expect(idleMs).toBeGreaterThanOrEqual(KEEP_ALIVE_TIMEOUT_MS - 100);
      // Node arms the socket's timer a second past the announced timeout, against a client racing it.
      expect(idleMs).toBeLessThan(KEEP_ALIVE_TIMEOUT_MS + 1_000 + SLACK_MS);
    },
    KEEP_ALIVE_TIMEOUT_MS + SLACK_MS * 3,
  );

  it(
    `DB connection pool: at most ${POOL_MAX} connections; the ${POOL_MAX + 1}th concurrent request waits for one and is served`,
    async () => {
      // Each POST holds its pool connection (its transaction open) this long.
      const holdMs = 3_000;
      const { baseUrl } = await start(holdMs);
      // Postgres' own view of the pool, on a connection outside it: the pool is all taken.
      const observer = createDatabase({
        url,
        service: "api-defaults-observer",
        poolMax: 1,
        statementTimeoutMs: 5_000,
        idleInTransactionTimeoutMs: 10_000,
      });
      try {
        const connectionsOfThePool = async () => {
          const { rows } = await sql<{ open: number }>`
            SELECT count(*)::int AS open FROM pg_stat_activity WHERE application_name = ${POOL_SERVICE}
          `.execute(observer.db);
          return rows[0]?.open ?? 0;
        };
        const startedAt = performance.now();
        let mostConnections = 0;
        const answers = Promise.all(
          Array.from({ length: POOL_MAX + 1 }, async (_, index) => {
            const response = await post(baseUrl, `pool-${index}-${randomUUID()}`);
            return { status: response.status, afterMs: performance.now() - startedAt };
          }),
        );
        let settled = false;
        void answers.finally(() => {
          settled = true;
        });
        while (!settled) {
          mostConnections = Math.max(mostConnections, await connectionsOfThePool());
          await sleep(100);
        }
        const answered = await answers;
        expect(mostConnections).toBe(POOL_MAX);
        expect(answered.map((each) => each.status)).toEqual(Array.from({ length: POOL_MAX + 1 }, () => 201));
        // The last one waited for a connection (one hold), then held its own (another).
        const last = Math.max(...answered.map((each) => each.afterMs));
        expect(last).toBeGreaterThanOrEqual(holdMs * 2);
      } finally {
        await observer.close(5_000);
      }
    },
    SLACK_MS * 6,
  );
});
