import { EventEmitter, once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { setTimeout } from "node:timers/promises";

/** What the stub does to each link request until told otherwise. */
export interface EquipmentFault {
  /** Answer only after this long (the document's "a stub that does not answer for 20 s"). */
  readonly delayMs?: number;
  /** Never answer until the fault is cleared, the client gives up or the stub closes. */
  readonly hang?: boolean;
  /** Answer with this status (e.g. 503) instead of linking. */
  readonly status?: number;
}

/** One request as the stub received it, before any fault applied. */
export interface ReceivedLink {
  readonly photoId: string | null;
  readonly idempotencyKey: string | null;
  /** The raw `X-Request-Timeout-Ms` header, as it arrived. */
  readonly timeoutHeader: string | null;
  /** `performance.now()` of this process when the headers arrived. */
  readonly receivedAt: number;
  /** Resolves when the exchange is over: answered, or the caller went away. */
  readonly ended: Promise<void>;
}

export interface EquipmentStub {
  readonly url: string;
  setFault(fault: EquipmentFault): void;
  /** Back to normal; requests held by `hang` or `delayMs` are answered now. */
  clearFault(): void;
  /** Every request received, in arrival order. */
  readonly received: readonly ReceivedLink[];
  /** Resolves with the first received request (past or future) matching `predicate`. */
  waitForRequest(predicate: (request: ReceivedLink) => boolean): Promise<ReceivedLink>;
  /** Gear links stored per idempotency key: a repeated key never links twice. */
  linkedPhotos(): ReadonlyMap<string, readonly string[]>;
  /** Requests that repeated an idempotency key already linked. */
  readonly repeats: number;
  /** Most requests held open at the same moment: above 1 proves requests do not queue. */
  readonly peakConcurrent: number;
  close(): Promise<void>;
}

/**
 * The equipment service of the local stack: `POST /links` with `{ photoId, gearIds }` and an
 * `Idempotency-Key`, on node:http, which handles requests concurrently. The source document's trap
 * was a single-threaded stub that read the next request only after answering the previous one, so a
 * hanging call hid the timeout header of the next; this one records each request as it arrives.
 */
export async function startEquipmentStub(options: { port?: number } = {}): Promise<EquipmentStub> {
  let fault: EquipmentFault = {};
  const received: ReceivedLink[] = [];
  const linked = new Map<string, readonly string[]>();
  const arrivals = new EventEmitter();
  const released = new EventEmitter();
  let repeats = 0;
  let concurrent = 0;
  let peakConcurrent = 0;

  const server = http.createServer(async (req, res) => {
    concurrent += 1;
    peakConcurrent = Math.max(peakConcurrent, concurrent);
    res.once("close", () => {
      concurrent -= 1;
    });
    const header = (name: string) => {
      const value = req.headers[name];
      return (Array.isArray(value) ? value[0] : value) ?? null;
    };
    const receivedAt = performance.now();
    const ended = once(res, "close").then(() => {});
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: { photoId?: unknown; gearIds?: unknown } = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString() || "{}") as typeof body;
    } catch {
      // A malformed body is answered 400 below, after it was recorded.
    }
    const request: ReceivedLink = {
      photoId: typeof body.photoId === "string" ? body.photoId : null,
      idempotencyKey: header("idempotency-key"),
      timeoutHeader: header("x-request-timeout-ms"),
      receivedAt,
      ended,
    };
    received.push(request);
    arrivals.emit("request", request);
    if (req.method !== "POST" || req.url !== "/links") {
      res.writeHead(404).end();
      return;
    }

    const applied = fault;
    if (applied.hang || (applied.delayMs ?? 0) > 0) {
      // Whichever ends the wait, the other listeners and the timer go away with it.
      const waitOver = new AbortController();
      const { signal } = waitOver;
      const waits = [once(res, "close", { signal }), once(released, "release", { signal })];
      if (!applied.hang) waits.push(setTimeout(applied.delayMs, undefined, { signal }).then(() => []));
      await Promise.race(waits);
      waitOver.abort();
      await Promise.allSettled(waits);
    }
    // The caller gave up meanwhile: a deadline-aware service stops here, it does not link for nobody.
    if (res.destroyed || res.writableEnded) return;
    if (applied.status !== undefined) {
      res.writeHead(applied.status, { "content-type": "application/json" }).end('{"error":"injected"}');
      return;
    }
    const key = request.idempotencyKey ?? request.photoId;
    if (key === null || !Array.isArray(body.gearIds)) {
      res.writeHead(400, { "content-type": "application/json" }).end('{"error":"photoId and gearIds"}');
      return;
    }
    if (linked.has(key)) {
      repeats += 1;
      res.writeHead(200, { "content-type": "application/json" }).end('{"linked":true,"repeat":true}');
      return;
    }
    linked.set(key, body.gearIds.map(String));
    res.writeHead(201, { "content-type": "application/json" }).end('{"linked":true}');
  });
  // Every held request listens for the release.
  released.setMaxListeners(0);

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    setFault(next) {
      fault = next;
    },
    clearFault() {
      fault = {};
      released.emit("release");
    },
    received,
    waitForRequest(predicate) {
      const seen = received.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => {
        const onRequest = (request: ReceivedLink) => {
          if (!predicate(request)) return;
          arrivals.off("request", onRequest);
          resolve(request);
        };
        arrivals.on("request", onRequest);
      });
    },
    linkedPhotos: () => linked,
    get repeats() {
      return repeats;
    },
    get peakConcurrent() {
      return peakConcurrent;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
