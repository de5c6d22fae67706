import net from "node:net";

/**
 * How the proxy cuts the way to its target:
 * - `reset`: every connection is reset (RST) and new ones are refused (nothing listens on the
 *   port): a server that went away, as during a failover's switch.
 * - `hang`: nothing passes any more, either way, and new connections are accepted and never
 *   answered: a frozen server, or a network path that silently drops packets.
 */
export type TcpCut = "reset" | "hang";

export interface TcpFaultProxy {
  /** Where clients connect: 127.0.0.1 on this port. */
  readonly port: number;
  /** Cuts the way (see TcpCut) until `restore`. */
  cut(kind: TcpCut): Promise<void>;
  /**
   * Lets connections through again. Connections hung during a `hang` are reset: their flows are as
   * dead as a failed-over server's, and a client must find that out as it would after one.
   */
  restore(): Promise<void>;
  /** Connections passing through now. */
  connections(): number;
  close(): Promise<void>;
}

interface Pair {
  readonly client: net.Socket;
  upstream: net.Socket | undefined;
}

/**
 * A TCP proxy on 127.0.0.1 in front of `target` that can cut the way on demand: the drills put one
 * between a daemon and Postgres to take the database away without touching the server, which the
 * other daemons and the checks go on using.
 */
export async function startTcpFaultProxy(target: { host: string; port: number }): Promise<TcpFaultProxy> {
  const pairs = new Set<Pair>();
  let state: "open" | TcpCut = "open";

  const end = (pair: Pair) => {
    pairs.delete(pair);
    pair.client.destroy();
    pair.upstream?.destroy();
  };
  const reset = (pair: Pair) => {
    pairs.delete(pair);
    pair.client.resetAndDestroy();
    pair.upstream?.resetAndDestroy();
  };
  const connectUpstream = (pair: Pair) => {
    const upstream = net.connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on("error", () => end(pair));
    upstream.on("close", () => end(pair));
    pair.client.pipe(upstream);
    upstream.pipe(pair.client);
  };

  const server = net.createServer((client) => {
    const pair: Pair = { client, upstream: undefined };
    pairs.add(pair);
    client.on("error", () => end(pair));
    client.on("close", () => end(pair));
    // A connection accepted while hung is held: the client waits for an answer that never comes.
    if (state === "open") connectUpstream(pair);
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  const stopListening = () => new Promise<void>((resolve) => server.close(() => resolve()));

  await listen(0);
  const { port } = server.address() as net.AddressInfo;

  return {
    port,
    async cut(kind) {
      if (state !== "open") throw new Error(`the proxy is cut already (${state})`);
      state = kind;
      if (kind === "reset") {
        for (const pair of [...pairs]) reset(pair);
        // Refused: nothing listens on the port until restore listens on it again.
        await stopListening();
        return;
      }
      for (const { client, upstream } of pairs) {
        client.unpipe();
        upstream?.unpipe();
        // Read and dropped, so neither side's writes ever fail: the bytes just go nowhere.
        client.on("data", () => {});
        upstream?.on("data", () => {});
      }
    },
    async restore() {
      const was = state;
      state = "open";
      if (was === "reset") await listen(port);
      if (was === "hang") for (const pair of [...pairs]) reset(pair);
    },
    connections: () => pairs.size,
    async close() {
      for (const pair of [...pairs]) end(pair);
      if (server.listening) await stopListening();
    },
  };
}
