import { createServer, type Server, type Socket } from "node:net";

/**
 * A TCP server on 127.0.0.1 that takes every connection, reads what it is sent and never answers:
 * a hung endpoint (an S3 or any HTTP service that stopped responding) for tests of a bound.
 */
export interface SilentServer {
  readonly endpoint: string;
  /** Connections opened so far. */
  opened(): number;
  /** Of those, how many the client has closed: an aborted request closes its connection. */
  closed(): number;
  stop(): Promise<void>;
}

export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  let opened = 0;
  let closed = 0;
  const server: Server = createServer((socket) => {
    opened += 1;
    sockets.add(socket);
    socket.on("error", () => {});
    // Reads (and drops) the request, so the client's close is seen: a paused socket never sees EOF.
    socket.resume();
    socket.once("close", () => {
      closed += 1;
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    opened: () => opened,
    closed: () => closed,
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
