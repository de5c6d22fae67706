import { randomUUID } from "node:crypto";
import { Deadline } from "@outbox/client";
import { type EquipmentStub, startEquipmentStub } from "@outbox/devstack";
import { createLogger } from "@outbox/shared";
import { waitUntil } from "@outbox/test-kit";
import { Registry } from "prom-client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createApiMetrics,
  createEquipmentClient,
  createPhotoServer,
  type PhotoServer,
  type PostPhoto,
} from "../src/index.js";
import { createMigratedTestDatabase, type DatabaseHandle } from "./photo-database.js";
import { rawConnection, startTestPhotoServer } from "./photo-server.js";

// The source document's timeout table, row by row, each seen from outside the server: what a client
// on the wire observes (docs/api.md, "The timeout table, row by row"). Each row at test-sized
// settings; slow-clients.test.ts has the read-header row (slowloris), the pool row is
// test/shared/database.test.ts's, the rule "idle > the load balancer's idle" daemon.test.ts's.
const HEADERS_TIMEOUT_MS = 500;
const HANDLER_TIMEOUT_MS = 1_500;
// Room for a 16 MiB answer to cross loopback on a loaded machine: the back-pressure case's reader
// must get all of it within the bound (2 s was not always enough at a load of 30).
const REQUEST_TIMEOUT_MS = 4_000;
const KEEP_ALIVE_TIMEOUT_MS = 2_000;
const EQUIPMENT_TIMEOUT_MS = 500;
/** Far more than loopback's socket buffers hold (a few MiB on Linux) while nobody reads. */
const LARGE_ANSWER_BYTES = 16 * 1024 * 1024;
/** A loaded machine's delays on top of a bound; far below what an unbounded wait would take. */
const SLACK_MS = 5_000;

let database: DatabaseHandle;
let stub: EquipmentStub;
const servers: PhotoServer[] = [];
beforeAll(async () => {
  ({ handle: database } = await createMigratedTestDatabase("api_timeouts", {
    service: "api-test",
    poolMax: 4,
  }));
  stub = await startEquipmentStub();
});
afterEach(async () => {
  stub.clearFault();
  await Promise.all(servers.splice(0).map((server) => server.stop(Deadline.after(5_000))));
});
afterAll(async () => {
  await stub.close();
  await database.close(5_000);
});

const serverTimeouts = {
  headersTimeoutMs: HEADERS_TIMEOUT_MS,
  handlerTimeoutMs: HANDLER_TIMEOUT_MS,
  requestTimeoutMs: REQUEST_TIMEOUT_MS,
  keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
};

async function start() {
  const started = await startTestPhotoServer(database, stub, {
    ...serverTimeouts,
    equipmentTimeoutMs: EQUIPMENT_TIMEOUT_MS,
  });
  servers.push(started.server);
  return started;
}

/** The photo server with `postPhoto` behind POST /photos: a handler of the test's own. */
async function startAnswering(postPhoto: PostPhoto) {
  const server = createPhotoServer({
    pool: database.pool,
    postPhoto,
    metrics: createApiMetrics(new Registry(), database.db),
    log: createLogger({ service: "api-test", version: "0", level: process.env.TEST_LOG_LEVEL ?? "silent" }),
    ...serverTimeouts,
  });
  servers.push(server);
  return { server, port: await server.listen("127.0.0.1", 0) };
}

/** The status lines in what a connection received (never the whole text: it runs to megabytes). */
function statusLines(received: string): string[] {
  return received.match(/HTTP\/1\.1 \d{3}/g) ?? [];
}

function postRequest(body: string): string {
  return `POST /photos HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

describe("server write (the handler's bound), API_REQUEST_TIMEOUT_MS, with the deadline inside it", () => {
  it(
    "ends the connection of a request whose handler never answers, though its body arrived at once",
    async () => {
      // A handler that ignores its deadline: what nothing in Node or Fastify ends once the body is read.
      const { server, port } = await startAnswering(() => new Promise(() => {}));
      const client = await rawConnection(port);
      client.write(postRequest(JSON.stringify({ title: "never answered", gearIds: [] })));

      // No answer at all: the connection is ended, as Go's WriteTimeout ends it.
      expect(await client.answer).toBe("");
      expect(client.closedAfterMs()).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS);
      expect(client.closedAfterMs()).toBeLessThan(REQUEST_TIMEOUT_MS + SLACK_MS);
      await waitUntil("the request to leave the server", () => server.inFlight() === 0, { timeoutMs: 5_000 });
    },
    REQUEST_TIMEOUT_MS + SLACK_MS * 2,
  );

  it(
    "ends the connection of a client that does not read its answer (TCP back-pressure), and serves one that reads within the bound",
    async () => {
      // The service's own answers (2–3 KB at most) fit in the socket buffers, where a client that
      // does not read them cannot hold anything: this handler's answer is far larger than they are.
      const largeAnswer = { id: "x".repeat(LARGE_ANSWER_BYTES), gearLink: "linked" as const };
      const { server, port } = await startAnswering(async () => largeAnswer);
      const request = postRequest(JSON.stringify({ title: "large answer", gearIds: [] }));
      const notReading = await rawConnection(port, { reads: false });
      const readingSoon = await rawConnection(port, { reads: false });
      notReading.write(request);
      readingSoon.write(request);
      const startedAt = performance.now();

      // A reader gets all of its answer. It starts at once: the bound covers the transfer of the
      // large answer, which on a loaded machine can take most of it, so a reader that waited first
      // would test the machine's speed.
      readingSoon.startReading();
      readingSoon.write(
        `GET /photos/${randomUUID()} HTTP/1.1\r\nHost: 127.0.0.1\r\nconnection: close\r\n\r\n`,
      );
      const served = await readingSoon.answer;
      // Its whole answer, then the answer of its next request.
      expect(statusLines(served)).toEqual(["HTTP/1.1 201", "HTTP/1.1 404"]);
      expect(served.length).toBeGreaterThan(LARGE_ANSWER_BYTES);

      // The other one has not read a byte: the server gives its answer up at the bound, and with
      // it the request (no handler, no pool client held for it).
      await waitUntil("the unread answer to leave the server", () => server.inFlight() === 0, {
        timeoutMs: REQUEST_TIMEOUT_MS + SLACK_MS,
      });
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS);
      // What the kernel had buffered still arrives, then the end: the answer is cut short.
      notReading.startReading();
      const cut = await notReading.answer;
      expect(statusLines(cut)).toEqual(["HTTP/1.1 201"]);
      expect(cut.length).toBeLessThan(LARGE_ANSWER_BYTES);
    },
    REQUEST_TIMEOUT_MS + SLACK_MS * 3,
  );
});

describe("server idle, API_KEEP_ALIVE_TIMEOUT_MS", () => {
  it(
    "closes an idle keep-alive connection at the setting, not before, and tells the client so",
    async () => {
      const { port } = await start();
      const client = await rawConnection(port);
      client.write(`GET /photos/${randomUUID()} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      const answer = await client.answer;
      expect(answer).toMatch(/^HTTP\/1\.1 404 /);
      expect(answer).toMatch(new RegExp(`\r\nkeep-alive: timeout=${KEEP_ALIVE_TIMEOUT_MS / 1_000}\r\n`, "i"));
      // Idle from the answer's last byte to the server's close. Node's own default (5 s) and Fastify's
      // (72 s) are both outside these bounds.
      const idleMs = client.closedAfterMs() - client.lastDataAfterMs();
      // The client's clock starts once its event loop has read the answer, which on a loaded machine
      // can be a while after the server's started: a tenth of a second is allowed for it.
      expect(idleMs).toBeGreaterThanOrEqual(KEEP_ALIVE_TIMEOUT_MS - 100);
      expect(idleMs).toBeLessThan(KEEP_ALIVE_TIMEOUT_MS * 2);
    },
    KEEP_ALIVE_TIMEOUT_MS + SLACK_MS * 2,
  );
});

describe("internal HTTP client, API_EQUIPMENT_TIMEOUT_MS", () => {
  const gear = { gearIds: ["tripod"] };

  it(
    "gives up on an equipment service that never answers at its own limit, well within the request's deadline",
    async () => {
      const { baseUrl } = await start();
      stub.setFault({ hang: true });
      const startedAt = performance.now();
      const response = await fetch(`${baseUrl}/photos`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: "unanswered link", ...gear }),
      });
      const answeredAfterMs = performance.now() - startedAt;
      const body = (await response.json()) as { id: string; gearLink: string };
      expect({ status: response.status, gearLink: body.gearLink }).toEqual({
        status: 201,
        gearLink: "pending",
      });
      // A 201 with the link pending, not the 504 of the request's own deadline (the handler cap):
      // the client's limit ended the wait.
      expect(answeredAfterMs).toBeGreaterThanOrEqual(EQUIPMENT_TIMEOUT_MS);
      // Without a caller's header, the client's own limit is what travels downstream.
      const call = await stub.waitForRequest((request) => request.photoId === body.id);
      expect(Number(call.timeoutHeader)).toBeGreaterThan(0);
      expect(Number(call.timeoutHeader)).toBeLessThanOrEqual(EQUIPMENT_TIMEOUT_MS);
    },
    SLACK_MS * 2,
  );

  it(
    "bounds a call made without any caller's deadline (reconciliation's) by the same limit",
    async () => {
      stub.setFault({ hang: true });
      const equipment = createEquipmentClient({ baseUrl: stub.url, timeoutMs: EQUIPMENT_TIMEOUT_MS });
      const startedAt = performance.now();
      const outcome = await equipment.link({ photoId: randomUUID(), ...gear });
      const gaveUpAfterMs = performance.now() - startedAt;
      expect(outcome).toEqual({ linked: false, reason: "deadline exceeded" });
      expect(gaveUpAfterMs).toBeGreaterThanOrEqual(EQUIPMENT_TIMEOUT_MS);
      expect(gaveUpAfterMs).toBeLessThan(EQUIPMENT_TIMEOUT_MS + SLACK_MS);
    },
    SLACK_MS * 2,
  );
});
