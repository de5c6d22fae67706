import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import type { Logger } from "../log/logger.js";
import { connectionsCheckingInterval } from "./timeout-checks.js";

export interface OpsServerSettings {
  readonly host: string;
  readonly port: number;
  readonly metrics: Registry;
  readonly log: Logger;
}

export interface OpsServer {
  readonly port: number;
  /** `/readyz` answers 200 only while ready; a stopping daemon turns it off first of all. */
  setReady(ready: boolean): void;
  /** While ready, `/readyz` also answers 503 while `why` gives a reason (said in the body). */
  readyUnless(why: () => string | undefined): void;
  /**
   * `/livez` answers 503 while `why` gives a reason (a loop that stopped turning: LoopWatch), in its
   * JSON body's `reason`; otherwise 200 for as long as the process answers at all.
   */
  liveUnless(why: () => string | undefined): void;
  /** Stops accepting, lets in-flight responses finish with `Connection: close`, closes idle sockets. */
  close(): Promise<void>;
}

// Inner layers wait less: a load balancer keeps idle connections 60 s (ALB default), so the server
// keeps them 65 s; otherwise the LB reuses a socket the server just closed and answers 502.
const HEADERS_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 30_000;
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** `/livez`, `/readyz` and `/metrics` on node:http. */
export async function startOpsServer(settings: OpsServerSettings): Promise<OpsServer> {
  let ready = false;
  let unready: () => string | undefined = () => undefined;
  let unlive: () => string | undefined = () => undefined;
  let closing = false;
  const server = http.createServer(
    { connectionsCheckingInterval: connectionsCheckingInterval(HEADERS_TIMEOUT_MS) },
    async (req, res) => {
      // A keep-alive client would otherwise hold the socket open and make close() wait for its timeout.
      const send = (status: number, body: string, contentType = "text/plain; charset=utf-8") => {
        if (closing) res.setHeader("connection", "close");
        res.writeHead(status, { "content-type": contentType }).end(body);
      };
      const path = (req.url ?? "/").split("?")[0];
      try {
        if (path === "/livez") {
          const reason = unlive();
          const body = reason === undefined ? { status: "ok" } : { status: "stalled", reason };
          send(reason === undefined ? 200 : 503, `${JSON.stringify(body)}\n`, "application/json");
        } else if (path === "/readyz") {
          const reason = ready ? unready() : "not ready";
          send(reason === undefined ? 200 : 503, `${reason ?? "ready"}\n`);
        } else if (path === "/metrics")
          send(200, await settings.metrics.metrics(), settings.metrics.contentType);
        else send(404, "not found\n");
      } catch (error) {
        settings.log.warn({ err: error, path }, "ops request failed");
        if (!res.headersSent) send(500, "internal error\n");
      }
    },
  );
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(settings.port, settings.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    port,
    setReady(value) {
      ready = value;
    },
    readyUnless(why) {
      unready = why;
    },
    liveUnless(why) {
      unlive = why;
    },
    close() {
      closing = true;
      ready = false;
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      });
    },
  };
}
