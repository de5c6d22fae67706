import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequestHandler } from "local-aws-sqs";
import { countReceivesAsAws } from "./aws-receive-counts.js";

export interface EmbeddedSqsOptions {
  region: string;
  accountId: string;
}

export interface RunningSqs {
  readonly endpoint: string;
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * `local-aws-sqs` on a random 127.0.0.1 port. We build the http server ourselves from its
 * request handler so we hold the service and can clear its queues (and their timers) on stop.
 *
 * Quirk for callers: it returns system attributes such as `ApproximateReceiveCount` only when
 * ReceiveMessage carries the legacy `AttributeNames`, whereas real SQS reads
 * `MessageSystemAttributeNames`. Send both to get the same answer from either.
 *
 * Receive counts are AWS's: a ChangeMessageVisibility is not a receive (see countReceivesAsAws).
 * A long poll answers once any message is there, as AWS's does: unpatched, it waited for
 * MaxNumberOfMessages or the whole wait (patches/local-aws-sqs@2.0.2.patch; pinned against moto
 * by test/devstack/long-poll.test.ts).
 */
export async function startEmbeddedSqs(options: EmbeddedSqsOptions): Promise<RunningSqs> {
  const { service, requestHandler } = createRequestHandler({
    port: 0,
    hostname: "127.0.0.1",
    region: options.region,
    accountId: options.accountId,
    // AWS makes you wait 60 s before re-creating a deleted queue's name; tests cannot afford that.
    emulateQueueCreationLifecycle: false,
  });
  const server = createServer((req, res) => {
    countReceivesAsAws(service);
    requestHandler(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  // ≥ 2 s: Node's agents treat `Keep-Alive: timeout=1` as already expired and reconnect per call.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  // Queue URLs are built from the service's PORT, which it only learns when it owns the server.
  service.PORT = port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Long-polling ReceiveMessage calls would otherwise hold close() for up to 20 s.
      server.closeAllConnections();
      service.resetAll();
      await closed;
    },
  };
}
