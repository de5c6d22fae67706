import http from "node:http";
import type { AddressInfo } from "node:net";
import { createProxyServer } from "http-proxy-3";

/**
 * The load balancer of the termination-race drill: round-robin over a target list that changes only
 * when told. Like an endpoint list owned by a control plane, it never checks whether a target still
 * accepts; a request it sends to one that does not answers 502 — the request the race costs.
 */
export interface RoundRobinProxy {
  readonly url: string;
  targets(): readonly string[];
  /** Takes a target out of the rotation (the endpoint removal reaching this router). */
  remove(target: string): void;
  close(): Promise<void>;
}

export async function startRoundRobinProxy(initialTargets: readonly string[]): Promise<RoundRobinProxy> {
  let targets = [...initialTargets];
  let next = 0;
  // No keep-alive towards the replicas: every request opens its own connection, so a replica that
  // has closed its listener refuses it — the model's "no connection reuse".
  const agent = new http.Agent({ keepAlive: false });
  const proxy = createProxyServer({ agent });
  const server = http.createServer((req, res) => {
    const target = targets[next++ % targets.length];
    if (target === undefined) {
      res.writeHead(503).end("no target left");
      return;
    }
    proxy.web(req, res, { target }, (error, _req, outgoing) => {
      if (outgoing instanceof http.ServerResponse) {
        if (!outgoing.headersSent) outgoing.writeHead(502);
        outgoing.end(`${target}: ${error.message}`);
      } else {
        outgoing.destroy();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    targets: () => targets,
    remove(target) {
      targets = targets.filter((candidate) => candidate !== target);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
