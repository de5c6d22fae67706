import net from "node:net";

/**
 * How the proxy cuts the way to its target:
 * - `reset`: every connection is reset (RST) and new ones are refused (nothing listens on the
 *   port): a server that went away, as during a failover's switch.
 * - `hang`: nothing passes any more, either way, and new connections are accepted and never
 *   answered: a frozen server, or a network path that silently drops packets.
 * - `trickle`: as `hang`, but each request (whatever a client sends) is answered with an HTTP
 *   response head that never ends, a header line every TRICKLE_EVERY_MS: a client whose timeout is
 *   one of socket inactivity (Node's, the AWS SDK's `requestTimeout`) waits for ever. What a broken
 *   server or middlebox can do, and what only a liveness check catches.
 */
export type TcpCut = "reset" | "hang" | "trickle";

/** Well inside any inactivity timeout; Node's 16 KiB header limit then holds out for some minutes. */
const TRICKLE_EVERY_MS = 250;

export interface TcpFaultProxy {
  /** Where clients connect: 127.0.0.1 on this port. */
  readonly port: number;
  /** Cuts the way (see TcpCut) until `restore`. */
  cut(kind: TcpCut): Promise<void>;
  /**
   * Lets connections through again. Connections hung during a `hang` or `trickle` are reset: their flows are as
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
  /** The timer of a `trickle` answer being written. */
  trickle?: NodeJS.Timeout;
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
    clearInterval(pair.trickle);
    pairs.delete(pair);
    pair.client.destroy();
    pair.upstream?.destroy();
  };
  const reset = (pair: Pair) => {
    clearInterval(pair.trickle);
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

  /** From the client's next bytes on (its request), an answer that never ends; the bytes are dropped. */
  const trickleOn = (pair: Pair) => {
    pair.client.on("data", () => {
      if (pair.trickle !== undefined) return;
      pair.client.write("HTTP/1.1 200 OK\r\n");
      pair.trickle = setInterval(() => pair.client.write("x-trickle: 1\r\n"), TRICKLE_EVERY_MS);
    });
  };

  const server = net.createServer((client) => {
    const pair: Pair = { client, upstream: undefined };
    pairs.add(pair);
    client.on("error", () => end(pair));
    client.on("close", () => end(pair));
    // A connection accepted while hung is held: the client waits for an answer that never comes.
    if (state === "open") connectUpstream(pair);
    else if (state === "trickle") trickleOn(pair);
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
      for (const pair of pairs) {
        const { client, upstream } = pair;
        client.unpipe();
        upstream?.unpipe();
        // Read and dropped, so neither side's writes ever fail: the bytes just go nowhere.
        client.on("data", () => {});
        upstream?.on("data", () => {});
        if (kind === "trickle") trickleOn(pair);
      }
    },
    async restore() {
      const was = state;
      state = "open";
      if (was === "reset") await listen(port);
      if (was === "hang" || was === "trickle") for (const pair of [...pairs]) reset(pair);
    },
    connections: () => pairs.size,
    async close() {
      for (const pair of [...pairs]) end(pair);
      if (server.listening) await stopListening();
    },
  };
}
