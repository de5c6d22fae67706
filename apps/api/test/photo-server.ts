import { connect } from "node:net";
import type { EquipmentStub } from "@outbox/devstack";
import { createLogger } from "@outbox/shared";
import { Registry } from "prom-client";
import {
  createApiMetrics,
  createEquipmentClient,
  createPhotoServer,
  type PhotoServer,
  type PhotoServerOptions,
  type PostPhotoDependencies,
  postPhoto,
} from "../src/index.js";
import type { DatabaseHandle } from "./photo-database.js";

/** The defaults of the settings, for a test to override what it exercises. */
export const DEFAULT_TIMEOUTS = {
  headersTimeoutMs: 5_000,
  handlerTimeoutMs: 25_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
};

export interface TestPhotoServer {
  readonly server: PhotoServer;
  readonly port: number;
  readonly baseUrl: string;
}

/** The photo server in this process on `database` and the equipment stub, listening on 127.0.0.1. */
export async function startTestPhotoServer(
  database: DatabaseHandle,
  stub: EquipmentStub,
  overrides: Partial<Pick<PhotoServerOptions, keyof typeof DEFAULT_TIMEOUTS>> &
    Partial<Pick<PostPhotoDependencies, "commitDelayMs" | "equipmentTimeoutMs">> = {},
): Promise<TestPhotoServer> {
  const { commitDelayMs = 0, equipmentTimeoutMs = 10_000, ...timeouts } = overrides;
  const settings = { ...DEFAULT_TIMEOUTS, ...timeouts };
  const equipment = createEquipmentClient({ baseUrl: stub.url, timeoutMs: equipmentTimeoutMs });
  const server = createPhotoServer({
    pool: database.pool,
    postPhoto: (photo, deadline, idempotencyKey) =>
      postPhoto(
        {
          pool: database.pool,
          equipment,
          equipmentTimeoutMs,
          handlerTimeoutMs: settings.handlerTimeoutMs,
          topic: "photos",
          commitDelayMs,
        },
        photo,
        deadline,
        idempotencyKey,
      ),
    metrics: createApiMetrics(new Registry(), database.db),
    log: createLogger({ service: "api-test", version: "0", level: process.env.TEST_LOG_LEVEL ?? "silent" }),
    ...settings,
  });
  const port = await server.listen("127.0.0.1", 0);
  return { server, port, baseUrl: `http://127.0.0.1:${port}` };
}

export interface RawExchange {
  /** Everything the server sent, once it closed the connection. */
  readonly answer: Promise<string>;
  write(text: string): void;
  /** Starts reading what the server sent, when `reads: false` held it back. */
  startReading(): void;
  /** Milliseconds from the connect to the server's close (once `answer` resolved). */
  closedAfterMs(): number;
  /** Milliseconds from the connect to the last bytes received (NaN before any). */
  lastDataAfterMs(): number;
  destroy(): void;
}

/**
 * A raw TCP connection to the server: what a slow or hostile client sends, byte by byte. With
 * `reads: false` it reads nothing the server sends until `startReading()`: once the socket buffers
 * are full, the server's writes stall (TCP back-pressure). Such a client learns of a close only when
 * it reads again. With `halfOpen: true` it goes on sending when the server has sent its FIN (its
 * side of the connection is done); it learns of the close when a write meets the server's reset.
 */
export async function rawConnection(
  port: number,
  { reads = true, halfOpen = false } = {},
): Promise<RawExchange> {
  const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: halfOpen });
  // A reset shows in the answer (what arrived before it); it is not an error of the test.
  socket.on("error", () => {});
  await new Promise((resolve) => socket.once("connect", resolve));
  const openedAt = performance.now();
  let closedAt = Number.NaN;
  let lastDataAt = Number.NaN;
  let received = "";
  const startReading = () =>
    socket.on("data", (chunk: Buffer) => {
      lastDataAt = performance.now();
      received += chunk.toString();
    });
  // Without a `data` listener, Node reads up to its high-water mark, then leaves the rest unread.
  if (reads) startReading();
  const answer = new Promise<string>((resolve) =>
    socket.once("close", () => {
      closedAt = performance.now();
      resolve(received);
    }),
  );
  return {
    answer,
    write: (text) => {
      if (!socket.destroyed) socket.write(text);
    },
    startReading: () => {
      startReading();
    },
    closedAfterMs: () => closedAt - openedAt,
    lastDataAfterMs: () => lastDataAt - openedAt,
    destroy: () => socket.destroy(),
  };
}

/** The error body's message when the body has exactly the service's error shape, else a failure. */
export function errorMessage(body: unknown): string {
  if (typeof body !== "object" || body === null)
    throw new Error(`not an error body: ${JSON.stringify(body)}`);
  const keys = Object.keys(body);
  const { error } = body as { error?: unknown };
  if (keys.length !== 1 || typeof error !== "string")
    throw new Error(`not the error shape { error: string }: ${JSON.stringify(body)}`);
  return error;
}
