import http from "node:http";
import { connect, type Socket } from "node:net";
import { Deadline } from "@outbox/client";
import { type EquipmentStub, startEquipmentStub } from "@outbox/devstack";
import { createLogger } from "@outbox/shared";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createApiMetrics,
  createEquipmentClient,
  createPhotoServer,
  type PhotoServer,
  postPhoto,
} from "../src/index.js";
import { createMigratedTestDatabase, type DatabaseHandle } from "./photo-database.js";

// The drain itself, in this process: what happens to idle keep-alive connections, and to requests
// still running when the drain deadline fires. (The whole SIGTERM path runs in daemon.test.ts.)
let database: DatabaseHandle;
let stub: EquipmentStub;
beforeAll(async () => {
  ({ handle: database } = await createMigratedTestDatabase("api_stop", { service: "api-test", poolMax: 4 }));
  stub = await startEquipmentStub();
});
afterAll(async () => {
  await stub.close();
  await database.close(5_000);
});

async function startServer(
  commitDelayMs: number,
  equipmentTimeoutMs = 10_000,
  headersTimeoutMs = 5_000,
): Promise<{ server: PhotoServer; port: number }> {
  const server = createPhotoServer({
    pool: database.pool,
    postPhoto: (photo, deadline) =>
      postPhoto(
        {
          pool: database.pool,
          equipment: createEquipmentClient({ baseUrl: stub.url, timeoutMs: equipmentTimeoutMs }),
          equipmentTimeoutMs,
          handlerTimeoutMs: 25_000,
          topic: "photos",
          commitDelayMs,
        },
        photo,
        deadline,
      ),
    metrics: createApiMetrics(new Registry(), database.db),
    log: createLogger({ service: "api-test", version: "0", level: process.env.TEST_LOG_LEVEL ?? "silent" }),
    headersTimeoutMs,
    handlerTimeoutMs: 25_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 65_000,
  });
  return { server, port: await server.listen("127.0.0.1", 0) };
}

function post(port: number, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        port,
        host: "127.0.0.1",
        path: "/photos",
        method: "POST",
        agent,
        headers: { "content-type": "application/json" },
      },
      (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode ?? 0));
      },
    );
    request.on("error", reject);
    request.end(JSON.stringify({ title: "stop", gearIds: [] }));
  });
}

const BODY = JSON.stringify({ title: "in transit", gearIds: [] });

/** A raw connection that has sent the first half of a POST's head: a request on its way. */
async function requestOnItsWay(port: number): Promise<{ socket: Socket; answer: Promise<string> }> {
  const socket = connect(port, "127.0.0.1");
  // A reset shows in the answer (empty); it is not an error of the test.
  socket.on("error", () => {});
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.write("POST /photos HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  let received = "";
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString();
  });
  const answer = new Promise<string>((resolve) => socket.once("close", () => resolve(received)));
  return { socket, answer };
}

describe("PhotoServer.stop", () => {
  it("serves a request still on its way when the stop begins, and closes its connection after", async () => {
    const { server, port } = await startServer(0);
    const { socket, answer } = await requestOnItsWay(port);
    const stopping = server.stop(Deadline.after(20_000));
    socket.write(`content-type: application/json\r\ncontent-length: ${BODY.length}\r\n\r\n${BODY}`);
    const response = await answer;
    expect(response).toMatch(/^HTTP\/1\.1 201 /);
    expect(response.toLowerCase()).toContain("connection: close");
    expect(await stopping).toMatchObject({ clean: true, cut: 0 });
  });

  it("gives a request that never completes its head the headers timeout, then closes it", async () => {
    const { server, port } = await startServer(0, 10_000, 300);
    const { answer } = await requestOnItsWay(port);
    // Clean: the request never began, so nothing was cut; the stop ended long before its deadline.
    expect(await server.stop(Deadline.after(20_000))).toMatchObject({ clean: true, cut: 0 });
    expect(await answer).not.toMatch(/^HTTP\/1\.1 2/);
  });

  it("closes an idle keep-alive connection at once instead of waiting 65 s for it", async () => {
    const { server, port } = await startServer(0);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    expect(await post(port, agent)).toBe(201);
    const [socket] = Object.values(agent.freeSockets).flat();
    expect(socket).toBeDefined();
    const socketClosed = new Promise((resolve) => socket?.once("close", resolve));
    expect(await server.stop(Deadline.after(20_000))).toEqual({
      clean: true,
      inFlightAtStop: 0,
      drained: 0,
      cut: 0,
    });
    await socketClosed;
    agent.destroy();
  });

  it("cuts what is still running when the drain deadline fires, and says how many", async () => {
    const { server, port } = await startServer(30_000);
    const agent = new http.Agent({ keepAlive: true });
    const answers = [post(port, agent), post(port, agent)].map((answer) => answer.catch(() => "cut"));
    await expect.poll(() => server.inFlight(), { timeout: 10_000 }).toBe(2);
    const drainEnds = new AbortController();
    const stopping = server.stop(Deadline.after(Number.POSITIVE_INFINITY, drainEnds.signal));
    drainEnds.abort();
    expect(await stopping).toEqual({ clean: false, inFlightAtStop: 2, drained: 0, cut: 2 });
    expect(await Promise.all(answers)).toEqual(["cut", "cut"]);
    agent.destroy();
  });

  it("stops the downstream call when the client goes away: nobody waits for its answer", async () => {
    // A client timeout far beyond the test's: only the disconnect can end the call in time.
    const { server, port } = await startServer(0, 120_000);
    stub.setFault({ hang: true });
    const client = new AbortController();
    const answer = fetch(`http://127.0.0.1:${port}/photos`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ title: "gone", gearIds: ["lens"] }),
      signal: client.signal,
    }).catch(() => "gone");
    // The only gear link this file asks for.
    const call = await stub.waitForRequest((request) => request.idempotencyKey !== null);
    client.abort();
    expect(await answer).toBe("gone");
    await call.ended;
    stub.clearFault();
    await server.stop(Deadline.after(20_000));
  }, 30_000);
});
