import { Deadline } from "@outbox/client";
import { type EquipmentStub, startEquipmentStub } from "@outbox/devstack";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "./photo-database.js";
import { createMigratedTestDatabase } from "./photo-database.js";
import { errorMessage, rawConnection, startTestPhotoServer, type TestPhotoServer } from "./photo-server.js";

// A slow client against Node's timeouts, which Node checks only every `connectionsCheckingInterval`
// (30 s by default, counted from the server's start). Each test starts its own server, so without
// an interval derived from the settings the first check, and the close, come 30 s after the start.
const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 3_000;
/** Far below Node's default 30 s check, far above the timeouts plus a loaded machine's delays. */
const WELL_UNDER_THE_OLD_30_S = 15_000;

let database: DatabaseHandle;
let stub: EquipmentStub;
let running: TestPhotoServer | undefined;
beforeAll(async () => {
  ({ handle: database } = await createMigratedTestDatabase("api_slow", { service: "api-test", poolMax: 4 }));
  stub = await startEquipmentStub();
});
afterEach(async () => {
  await running?.server.stop(Deadline.after(5_000));
  running = undefined;
});
afterAll(async () => {
  await stub.close();
  await database.close(5_000);
});

async function start(): Promise<TestPhotoServer> {
  running = await startTestPhotoServer(database, stub, {
    headersTimeoutMs: HEADERS_TIMEOUT_MS,
    handlerTimeoutMs: 2_000,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
  });
  return running;
}

/** Sends `text` one character per `everyMs` until the server closes the connection. */
function trickle(
  exchange: { write(text: string): void; answer: Promise<string> },
  text: string,
  everyMs: number,
) {
  let sent = 0;
  const timer = setInterval(() => exchange.write(text[sent++ % text.length] ?? ""), everyMs);
  void exchange.answer.finally(() => clearInterval(timer));
}

describe("slow clients meet the configured timeouts", () => {
  it(
    "closes a connection whose headers trickle in (slowloris) with 408 soon after API_HEADERS_TIMEOUT_MS",
    async () => {
      const { port } = await start();
      const client = await rawConnection(port);
      client.write("POST /photos HTTP/1.1\r\nHost: 127.0.0.1\r\n");
      trickle(client, "X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 100);
      const answer = await client.answer;
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(errorMessage(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)))).toMatch(
        /^the request did not arrive in time/,
      );
      expect(client.closedAfterMs()).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS);
      expect(client.closedAfterMs()).toBeLessThan(WELL_UNDER_THE_OLD_30_S);
    },
    WELL_UNDER_THE_OLD_30_S * 2,
  );

  it(
    "answers a body that trickles in with one 408 at its deadline, and closes it soon after API_REQUEST_TIMEOUT_MS",
    async () => {
      const { port } = await start();
      // Trickling on after the server's FIN: the answer's lingering close discards what it sends,
      // until the body's own bound.
      const client = await rawConnection(port, { halfOpen: true });
      const body = JSON.stringify({ title: "trickled", gearIds: [] }).padEnd(1_000, " ");
      client.write(
        `POST /photos HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
      );
      trickle(client, body, 100);
      const answer = await client.answer;
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(answer).toMatch(/\r\nconnection: close\r\n/i);
      // The request timeout that ends the connection adds no second answer behind the first.
      expect(answer.match(/HTTP\/1\.1 /g)).toHaveLength(1);
      expect(errorMessage(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)))).toBe(
        "the request's body did not arrive within its deadline",
      );
      expect(client.closedAfterMs()).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS);
      expect(client.closedAfterMs()).toBeLessThan(WELL_UNDER_THE_OLD_30_S);
    },
    WELL_UNDER_THE_OLD_30_S * 2,
  );
});
