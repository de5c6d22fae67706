import { type ChildProcess, spawn } from "node:child_process";
import { request } from "node:http";
import { connect } from "node:net";
import { availableParallelism } from "node:os";
import { Deadline } from "@outbox/client";
import { type EquipmentStub, startEquipmentStub } from "@outbox/devstack";
import { hangLimit, waitUntil } from "@outbox/test-kit";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { LINGER_MAX_BYTES } from "../src/lingering-close.js";
import { createMigratedTestDatabase, type DatabaseHandle } from "./photo-database.js";
import { errorMessage, startTestPhotoServer, type TestPhotoServer } from "./photo-server.js";

// Its tests start a program: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 1 }) });

// A body over the 1 MiB limit is answered 413 before it has arrived; the connection then closes
// with a lingering close (apps/api/src/lingering-close.ts), so that a client still sending reads
// the answer instead of a reset (docs/api.md, "Hostile and faulty clients").
const TEN_MIB = 10 * 1024 * 1024;
const CLIENTS = 10;
const LIMIT_MESSAGE = "the body is larger than the limit of 1048576 bytes (1 MiB)";
/** Test-sized, where a test waits for the time bound (the body's own, API_REQUEST_TIMEOUT_MS). */
const REQUEST_TIMEOUT_MS = 2_000;
/** A loaded machine's delays on top of a bound; far below what an unbounded wait would take. */
const SLACK_MS = 5_000;

let database: DatabaseHandle;
let stub: EquipmentStub;
let running: TestPhotoServer | undefined;
beforeAll(async () => {
  ({ handle: database } = await createMigratedTestDatabase("api_oversize", {
    service: "api-test",
    poolMax: 4,
  }));
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

/** The server at its default settings (API_REQUEST_TIMEOUT_MS 30 s), or at `requestTimeoutMs`. */
async function start(requestTimeoutMs?: number): Promise<TestPhotoServer> {
  running = await startTestPhotoServer(
    database,
    stub,
    requestTimeoutMs === undefined
      ? {}
      : { headersTimeoutMs: 500, handlerTimeoutMs: requestTimeoutMs / 2, requestTimeoutMs },
  );
  return running;
}

type Framing = "content-length" | "chunked";

interface NodeHttpOutcome {
  readonly status: number | undefined;
  readonly message: string | undefined;
  /** The error the client met, if any: EPIPE or ECONNRESET when the server closed under it. */
  readonly error: string | undefined;
}

/**
 * A node:http client posting `bytes` in 64 KiB writes, as an application streams an upload. Once it
 * has read a whole answer that closes the connection, it stops sending by itself.
 */
function nodeHttpPost(port: number, bytes: number, framing: Framing): Promise<NodeHttpOutcome> {
  return new Promise((resolve) => {
    let status: number | undefined;
    let message: string | undefined;
    let error: string | undefined;
    const headers: Record<string, string | number> = { "content-type": "application/json" };
    if (framing === "content-length") headers["content-length"] = bytes;
    const post = request(
      { host: "127.0.0.1", port, method: "POST", path: "/photos", headers },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (text: string) => {
          body += text;
        });
        response.on("end", () => {
          status = response.statusCode;
          message = errorMessage(JSON.parse(body));
        });
      },
    );
    post.on("error", (failure: NodeJS.ErrnoException) => {
      error = failure.code ?? failure.message;
    });
    // `close` comes last, after the answer's `end` or the error, whichever the client met.
    post.on("close", () => resolve({ status, message, error }));
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const send = () => {
      while (sent < bytes) {
        sent += chunk.length;
        if (!post.write(chunk)) return void post.once("drain", send);
      }
      post.end();
    };
    send();
  });
}

/**
 * A raw connection that keeps its side open when the server sends its FIN, so that only the
 * server's bounds end it: a client that goes on sending after its answer.
 */
async function stubbornConnection(port: number) {
  const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
  socket.on("error", () => {});
  await new Promise((resolve) => socket.once("connect", resolve));
  const connectedAt = performance.now();
  let received = "";
  let answered: () => void = () => {};
  const answer = new Promise<void>((resolve) => {
    answered = resolve;
  });
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString();
    if (received.includes("\r\n\r\n")) answered();
  });
  const closed = new Promise<number>((resolve) =>
    socket.once("close", () => resolve(performance.now() - connectedAt)),
  );
  return {
    /** Resolves once the answer's head has arrived. */
    answer,
    received: () => received,
    /** Milliseconds from the connect to the server's close. */
    closed,
    /** Writes `data`; resolves whether all of it went out before the connection broke. */
    send: (data: string | Buffer) =>
      new Promise<boolean>((resolve) => socket.write(data, (error) => resolve(!error))),
    end: () => socket.end(),
  };
}

function oversizeHead(bytes: number): string {
  return `POST /photos HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${bytes}\r\n\r\n`;
}

/**
 * A body of `bytes` the way most clients send one (Python's http.client, `requests`): all of it
 * first, reading nothing meanwhile, and only then the answer. A server that closes while the body
 * is still arriving resets the connection, and such a client sees EPIPE, not the answer.
 */
function sendAllThenRead(port: number, bytes: number, framing: Framing): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.pause();
    let received = "";
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString();
    });
    socket.on("close", () => resolve(received));
    const length = framing === "content-length" ? `content-length: ${bytes}` : "transfer-encoding: chunked";
    socket.write(
      `POST /photos HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n${length}\r\n\r\n`,
    );
    const body = Buffer.alloc(bytes, 0x20);
    const framed =
      framing === "content-length"
        ? body
        : Buffer.concat([Buffer.from(`${bytes.toString(16)}\r\n`), body, Buffer.from("\r\n0\r\n\r\n")]);
    socket.write(framed, (error) => {
      if (error) return socket.destroy();
      socket.resume();
      // Done sending: the answer is all that is left to come.
      socket.end();
    });
  });
}

/** The body of a raw answer as the service's error message. */
function answerMessage(answer: string): string {
  return errorMessage(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)));
}

/**
 * `work` while every core is kept busy by child processes spinning in a loop: the server, the
 * clients and the kernel's loopback then all wait for a core, as on a loaded machine. The children
 * are killed whatever `work` does.
 */
async function underCpuLoad<T>(work: () => Promise<T>): Promise<T> {
  const spinners: ChildProcess[] = Array.from({ length: availableParallelism() }, () =>
    spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }),
  );
  try {
    await Promise.all(spinners.map((child) => new Promise((resolve) => child.once("spawn", resolve))));
    return await work();
  } finally {
    for (const child of spinners) child.kill("SIGKILL");
  }
}

describe("a body over the limit: every client reads its 413", () => {
  describe.each([
    ["idle machine", <T>(work: () => Promise<T>) => work()],
    ["every core busy", underCpuLoad],
  ])("%s", (_load, load) => {
    it.each(["content-length", "chunked"] as const)(
      `${CLIENTS} of ${CLIENTS} node:http clients sending 10 MiB at once (%s) read the 413, with no EPIPE`,
      async (framing) => {
        const { port } = await start();
        const outcomes = await load(() =>
          Promise.all(Array.from({ length: CLIENTS }, () => nodeHttpPost(port, TEN_MIB, framing))),
        );
        expect(outcomes).toEqual(
          Array.from({ length: CLIENTS }, () => ({
            status: 413,
            message: LIMIT_MESSAGE,
            error: undefined,
          })),
        );
      },
      120_000,
    );

    it.each(["content-length", "chunked"] as const)(
      `${CLIENTS} of ${CLIENTS} clients that send all 10 MiB (%s) before reading a byte read the 413`,
      async (framing) => {
        const { port } = await start();
        const answers = await load(() =>
          Promise.all(Array.from({ length: CLIENTS }, () => sendAllThenRead(port, TEN_MIB, framing))),
        );
        for (const answer of answers) {
          expect(answer).toMatch(/^HTTP\/1\.1 413 /);
          expect(answer).toMatch(/\r\nconnection: close\r\n/i);
          expect(answerMessage(answer)).toBe(LIMIT_MESSAGE);
        }
      },
      120_000,
    );
  });

  it("answers fetch's 10 MiB body with the 413 too", async () => {
    const { baseUrl } = await start();
    const response = await fetch(`${baseUrl}/photos`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: Buffer.alloc(TEN_MIB, 0x20),
    });
    expect(response.status).toBe(413);
    expect(errorMessage(await response.json())).toBe(LIMIT_MESSAGE);
  });
});

describe("the lingering close: bounded, and the last thing on its connection", () => {
  // Each client below sends its body only once it has its answer: answered before a byte of it.

  it(`cuts a client that goes on sending past ${LINGER_MAX_BYTES / 1024 / 1024} MiB after its answer`, async () => {
    const { port } = await start();
    const client = await stubbornConnection(port);
    const bytes = LINGER_MAX_BYTES * 2;
    await client.send(oversizeHead(bytes));
    await client.answer;
    expect(client.received()).toMatch(/^HTTP\/1\.1 413 /);
    // Had the server discarded all of it, the write would complete (and the end close the connection).
    const sentAll = await client.send(Buffer.alloc(bytes, 0x20));
    client.end();
    expect(sentAll).toBe(false);
    await client.closed;
  }, 60_000);

  it(
    "closes a connection whose client has sent its body but does not close at API_REQUEST_TIMEOUT_MS",
    async () => {
      const { port } = await start(REQUEST_TIMEOUT_MS);
      const client = await stubbornConnection(port);
      const bytes = 2 * 1024 * 1024;
      await client.send(oversizeHead(bytes));
      await client.answer;
      expect(client.received()).toMatch(/^HTTP\/1\.1 413 /);
      expect(await client.send(Buffer.alloc(bytes, 0x20))).toBe(true);
      // The body is complete, so Node's own request timeout is over: only the lingering bound is left.
      // Empty lines, which HTTP lets a client send between requests, show when the server's side is
      // gone: the first one after it is answered with a reset.
      const probes = setInterval(() => void client.send("\r\n"), 100);
      const closedAfterMs = await client.closed.finally(() => clearInterval(probes));
      expect(closedAfterMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS);
      expect(closedAfterMs).toBeLessThan(REQUEST_TIMEOUT_MS + SLACK_MS);
    },
    REQUEST_TIMEOUT_MS + SLACK_MS * 2,
  );

  it("serves nothing pipelined behind a body over the limit: its client sends it again elsewhere", async () => {
    const { port } = await start();
    const title = `pipelined-${Date.now()}`;
    const next = JSON.stringify({ title, gearIds: [] });
    const bytes = 2 * 1024 * 1024;
    const client = await stubbornConnection(port);
    await client.send(oversizeHead(bytes));
    await client.answer;
    await client.send(
      Buffer.concat([
        Buffer.alloc(bytes, 0x20),
        Buffer.from(
          `POST /photos HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${next.length}\r\n\r\n${next}`,
        ),
      ]),
    );
    // Staying connected, so that nothing but the server's refusal stops the request pipelined.
    const probes = setInterval(() => void client.send("\r\n"), 100);
    await client.closed.finally(() => clearInterval(probes));
    expect(client.received().match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 413"]);
    // Nothing written for the second request, not even after the connection is gone.
    await waitUntil("the server to have no request in flight", () => running?.server.inFlight() === 0, {
      timeoutMs: 5_000,
    });
    const photos = await database.db.selectFrom("photos").select("id").where("title", "=", title).execute();
    expect(photos).toEqual([]);
  });
});
