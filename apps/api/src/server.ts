import { performance } from "node:perf_hooks";
import { type Database, Deadline, type Logger, REQUEST_TIMEOUT_HEADER, requestBudget } from "@outbox/shared";
import Fastify, { type FastifyError, LogController } from "fastify";
import type { Kysely } from "kysely";
import { z } from "zod";
import { getPhoto } from "./get-photo.js";
import type { ApiMetrics } from "./metrics.js";
import { newPhoto, type PostPhoto } from "./post-photo.js";

declare module "fastify" {
  interface FastifyRequest {
    /** min(X-Request-Timeout-Ms, the handler cap); aborts on the client's disconnect too. */
    deadline: Deadline;
    receivedAt: number;
  }
}

export interface PhotoServerSettings {
  readonly db: Kysely<Database>;
  /** What POST /photos does once its body is valid: `postPhoto` bound to its dependencies. */
  readonly postPhoto: PostPhoto;
  readonly metrics: ApiMetrics;
  readonly log: Logger;
  readonly headersTimeoutMs: number;
  readonly handlerTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
}

/** What a stop reports on its `graceful shutdown complete` line (and runDaemon's `drained`). */
export interface ShutdownSummary {
  readonly clean: boolean;
  /** Requests being handled when the listener closed. */
  readonly inFlightAtStop: number;
  /** Of those, answered before the drain deadline. */
  readonly drained: number;
  /** Of those, cut when the drain deadline fired (their connections destroyed). */
  readonly cut: number;
  readonly [field: string]: string | number | boolean;
}

export interface PhotoServer {
  listen(host: string, port: number): Promise<number>;
  inFlight(): number;
  /**
   * The stop: no new connections, new requests on open ones get 503, idle keep-alive connections
   * close, requests in flight finish and answer with `Connection: close`. When `drainDeadline` aborts
   * first, the remaining connections are destroyed and counted as `cut`.
   */
  stop(drainDeadline: AbortSignal): Promise<ShutdownSummary>;
}

const photoId = z.uuid();

export function createPhotoServer(settings: PhotoServerSettings): PhotoServer {
  const { metrics, log } = settings;
  const app = Fastify({
    loggerInstance: log,
    // Two log lines per request would drown the logs under load; the metrics count requests instead.
    logController: new LogController({ disableRequestLogging: true }),
    http: { headersTimeout: settings.headersTimeoutMs },
    requestTimeout: settings.requestTimeoutMs,
    keepAliveTimeout: settings.keepAliveTimeoutMs,
    // The backstop of the request deadline: answers even if a handler ignores its deadline.
    handlerTimeout: settings.handlerTimeoutMs,
    forceCloseConnections: "idle",
    // A request that reaches an open connection during the stop was sent before the client knew:
    // serve it (with `Connection: close`) rather than fail it; the drain deadline still bounds it.
    return503OnClosing: false,
  });
  let closing = false;
  let inFlight = 0;
  let lingering: NodeJS.Timeout | undefined;
  // Once the last request is answered during a stop, close the connections between requests at
  // once. A connection with a request's head still arriving gets what it would have had before the
  // stop, the headers timeout, and then goes: Node stops enforcing that timeout once the server
  // closes, so a client that went quiet mid-head would otherwise hold the stop to its deadline.
  const closeRemainingConnections = () => {
    app.server.closeIdleConnections();
    clearTimeout(lingering);
    lingering = setTimeout(() => app.server.closeAllConnections(), settings.headersTimeoutMs).unref();
  };

  app.decorateRequest("deadline", null as unknown as Deadline);
  app.decorateRequest("receivedAt", 0);

  app.addHook("onRequest", async (request, reply) => {
    request.receivedAt = performance.now();
    inFlight += 1;
    metrics.inFlight.inc();
    // Not `request.signal`: it follows the request stream, which closes once the body has been read.
    const disconnected = new AbortController();
    // `close` comes for every response, answered or cut (onResponse does not follow an aborted one).
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished) disconnected.abort(new Error("client disconnected"));
      request.deadline?.dispose();
      inFlight -= 1;
      metrics.inFlight.dec();
      if (closing && inFlight === 0) closeRemainingConnections();
    });
    const budget = requestBudget(
      request.headers[REQUEST_TIMEOUT_HEADER.toLowerCase()],
      settings.handlerTimeoutMs,
    );
    // The caller has already given up: no work at all, not even parsing the body.
    if (budget.expired) return reply.code(504).send({ error: "deadline already exceeded" });
    request.deadline = Deadline.after(budget.ms, disconnected.signal);
  });
  app.addHook("onSend", async (_request, reply) => {
    // A keep-alive client would otherwise send its next request to a server that is going away.
    if (closing) reply.header("connection", "close");
  });
  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unmatched";
    metrics.requests.inc({ route, status: reply.statusCode });
    metrics.requestSeconds.observe({ route }, (performance.now() - request.receivedAt) / 1_000);
  });
  app.setErrorHandler<FastifyError>((error, request, reply) => {
    // The handler cap, the request's own deadline, or Postgres cancelling a statement for it
    // (query_canceled, from the SET LOCAL statement_timeout): the caller's time ran out, not our code.
    if (
      error.code === "FST_ERR_HANDLER_TIMEOUT" ||
      error.name === "DeadlineExceededError" ||
      error.code === "57014"
    ) {
      return reply.code(504).send({ error: "deadline exceeded" });
    }
    const status = error.statusCode ?? 500;
    if (status >= 500) request.log.error({ err: error, url: request.url }, "request failed");
    return reply.code(status).send({ error: status >= 500 ? "internal error" : error.message });
  });

  app.post("/photos", async (request, reply) => {
    const body = newPhoto.safeParse(request.body);
    if (!body.success) return reply.code(400).send({ error: z.prettifyError(body.error) });
    const posted = await settings.postPhoto(body.data, request.deadline);
    metrics.gearLinks.inc({ outcome: posted.gearLink });
    return reply.code(201).send(posted);
  });

  app.get<{ Params: { id: string } }>("/photos/:id", async (request, reply) => {
    const id = photoId.safeParse(request.params.id);
    const photo = id.success ? await getPhoto(settings.db, id.data) : null;
    if (!photo) return reply.code(404).send({ error: "no such photo" });
    return photo;
  });

  return {
    async listen(host, port) {
      await app.listen({ host, port });
      const address = app.server.address();
      return typeof address === "object" && address !== null ? address.port : port;
    },
    inFlight: () => inFlight,
    async stop(drainDeadline) {
      closing = true;
      const inFlightAtStop = inFlight;
      const closed = app.close();
      if (inFlight === 0) closeRemainingConnections();
      const cutAt = new Promise<"cut">((resolve) => {
        if (drainDeadline.aborted) resolve("cut");
        drainDeadline.addEventListener("abort", () => resolve("cut"), { once: true });
      });
      const ended = await Promise.race([closed.then(() => "closed" as const), cutAt]);
      clearTimeout(lingering);
      if (ended === "closed") return { clean: true, inFlightAtStop, drained: inFlightAtStop, cut: 0 };
      const cut = inFlight;
      app.server.closeAllConnections();
      await closed;
      return { clean: false, inFlightAtStop, drained: inFlightAtStop - cut, cut };
    },
  };
}
