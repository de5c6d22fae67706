import { createServer as createHttpServer } from "node:http";
import { createServer as createNetServer, type Server, type Socket } from "node:net";

export interface FakeEngine {
  /** `DOCKER_HOST` value that reaches this engine. */
  dockerHost: string;
  /** Paths requested so far, API version prefix removed. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * What testcontainers 11.x's runtime discovery asks of an engine (client.ts `initStrategy`):
 * `GET /info`, and, when the process runs inside a container (`/.dockerenv`) and reaches the engine
 * over a unix socket, `GET /networks/bridge` for the gateway that containers are reached on.
 * Anything else is a 404, so a newer testcontainers that asks for more fails visibly.
 */
const answers: Record<string, object> = {
  "/info": {
    ID: "fake-engine",
    ServerVersion: "27.0.0",
    OperatingSystem: "Fake Linux",
    OSType: "linux",
    Architecture: "x86_64",
    NCPU: 2,
    MemTotal: 2 ** 31,
    IndexServerAddress: "https://index.docker.io/v1/",
    Labels: [],
    Runtimes: { runc: {} },
  },
  "/networks/bridge": {
    Name: "bridge",
    IPAM: { Config: [{ Subnet: "172.17.0.0/16", Gateway: "172.17.0.1" }] },
  },
};

function listen(server: Server, socketPath: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
}

/** A Docker Engine API that answers discovery, on a unix socket. */
export async function startFakeDockerEngine(socketPath: string): Promise<FakeEngine> {
  const requests: string[] = [];
  const server = createHttpServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://engine").pathname.replace(/^\/v\d+(\.\d+)?/, "");
    requests.push(path);
    const answer = answers[path];
    res.writeHead(answer ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(answer ?? { message: `fake engine: no ${path}` }));
  });
  await listen(server, socketPath);
  return {
    dockerHost: `unix://${socketPath}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An engine that accepts connections and never answers: a wedged VM. */
export async function startSilentDockerEngine(socketPath: string): Promise<FakeEngine> {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await listen(server, socketPath);
  return {
    dockerHost: `unix://${socketPath}`,
    requests: [],
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
