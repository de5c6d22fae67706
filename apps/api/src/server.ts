import { maxHeaderSize } from "node:http";
import { performance } from "node:perf_hooks";
import { context } from "@opentelemetry/api";
import { type Deadline, incomingDeadline, REQUEST_TIMEOUT_HEADER } from "@outbox/client";
import { connectionsCheckingInterval, PostgresUnansweredError, settlesBefore } from "@outbox/shared";
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest, LogController } from "fastify";
import { z } from "zod";
import { answerClientError } from "./client-error-reply.js";
import { deadlineConnection } from "./db/connections.js";
import { bodyTooLarge, errorReply } from "./error-reply.js";
import { ApiError } from "./errors.js";
import { getPhoto } from "./get-photo.js";
import { idempotencyKey } from "./idempotency-key.js";
import { BODY_LIMIT_BYTES, parseJsonBody } from "./json-body.js";
import { LINGER_MAX_BYTES, lingeringClose } from "./lingering-close.js";
import { newPhoto } from "./post-photo.js";
import { type RequestSpan, startRequestSpan } from "./request-span.js";
import { destroyUnwrittenResponses } from "./response-bound.js";
import { type PhotoServerOptions, photoServerTimeouts } from "./server-options.js";

declare module "fastify" {
  interface FastifyRequest {
    /** min(X-Request-Timeout-Ms, the handler cap); aborts on the client's disconnect too. Null until onRequest. */
    deadline: Deadline | null;
    /** The request's span; null until onRequest. */
    span: RequestSpan | null;
    receivedAt: number;
  }
}

/** What a stop reports on its `graceful shutdown complete` line (and runDaemon's `drained`). */
export interface ShutdownSummary {
  readonly clean: boolean;
  /** Requests being handled when the listener closed. */
  readonly inFlightAtStop: number;
  /**
   * Requests answered during the stop, before the drain deadline: those in flight when the listener
   * closed, and those that reached a connection still open after it.
   */
  readonly drained: number;
  /** Requests cut when the drain deadline fired (their connections destroyed). */
  readonly cut: number;
  readonly [field: string]: string | number | boolean;
}

export interface PhotoServer {
  listen(host: string, port: number): Promise<number>;
  inFlight(): number;
  /**
   * The stop: no new connections (refused), idle keep-alive connections close, requests in flight
   * finish and answer with `Connection: close`, and so is served a request that reaches a connection
   * still open (its client sent it before it could know). When `drainDeadline` aborts first, the
   * remaining connections are destroyed and their requests counted as `cut`.
   */
  stop(drainDeadline: Deadline): Promise<ShutdownSummary>;
}

const photoId = z.uuid();

/** Every error body is `{ "error": message }`, whatever produced the error. */
function sendError(
  reply: FastifyReply,
  status: number,
  message: string,
  retryAfterSeconds?: number,
): FastifyReply {
  if (retryAfterSeconds !== undefined) reply.header("retry-after", String(retryAfterSeconds));
  return reply.code(status).send({ error: message });
}

/** The request's deadline: every request that reaches a route has one (onRequest sets it or answers 504). */
function deadlineOf(request: FastifyRequest): Deadline {
  if (request.deadline === null) throw new Error("a route ran before the onRequest hook set its deadline");
  return request.deadline;
}

/** Runs a route's work inside its request's span, so that what it enqueues continues the trace. */
function inRequestSpan<T>(request: FastifyRequest, work: () => Promise<T>): Promise<T> {
  return request.span === null ? work() : context.with(request.span.context, work);
}

/** The photo server; throws a PhotoServerOptionsError for options the daemon's rules refuse. */
export function createPhotoServer(options: PhotoServerOptions): PhotoServer {
  const { metrics, log } = options;
  const settings = { ...options, ...photoServerTimeouts(options) };
  // Connections whose request was answered before its body had arrived: they close once the client
  // is done sending (see lingeringClose), and serve nothing more meanwhile.
  const answeredEarly = lingeringClose((bound, discardedBytes) =>
    log.warn(
      { bound, discardedBytes, maxBytes: LINGER_MAX_BYTES },
      "connection answered before its body arrived: lingering close cut at its bound",
    ),
  );
  const app = Fastify({
    loggerInstance: log,
    // Two log lines per request would drown the logs under load; the metrics count requests instead.
    logController: new LogController({ disableRequestLogging: true }),
    http: {
      headersTimeout: settings.headersTimeoutMs,
      connectionsCheckingInterval: connectionsCheckingInterval(settings.headersTimeoutMs),
    },
    requestTimeout: settings.requestTimeoutMs,
    bodyLimit: BODY_LIMIT_BYTES,
    // Any path segment Node lets through reaches the route, so an over-long photo id is a 404 like any
    // other id that names no photo, not Fastify's 414 in a shape of its own.
    routerOptions: { maxParamLength: maxHeaderSize },
    clientErrorHandler: (error, socket) =>
      answerClientError(error, socket, answeredEarly.isClosing(socket), settings),
    // The router's own refusals (a malformed percent-encoding) in the service's error shape.
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const { status, message } = errorReply(error, request);
      sendError(reply, status, message);
    },
    keepAliveTimeout: settings.keepAliveTimeoutMs,
    // The backstop of the request deadline: answers a handler that ignores its deadline, but only
    // while the body is arriving or for a request without one (Fastify drops the timer once the body
    // has been read). What bounds every request is destroyUnwrittenResponses, below.
    handlerTimeout: settings.handlerTimeoutMs,
    forceCloseConnections: "idle",
    // A request that reaches an open connection during the stop was sent before the client knew:
    // serve it (with `Connection: close`) rather than fail it; the drain deadline still bounds it.
    return503OnClosing: false,
  });
  // The server's hard limit per request (Go's WriteTimeout): the deadline sits inside it, so a handler
  // has the rest of it to answer its 504 and write it out.
  destroyUnwrittenResponses(app.server, settings.requestTimeoutMs, log);
  let closing = false;
  let inFlight = 0;
  let answeredDuringStop = 0;
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

  app.decorateRequest("deadline", null);
  app.decorateRequest("span", null);
  app.decorateRequest("receivedAt", 0);

  app.addHook("onRequest", async (request, reply) => {
    // A request pipelined behind one answered early: its client was told the connection closes, and
    // would send it again elsewhere, so serving it here would do its work twice.
    if (answeredEarly.isClosing(request.raw.socket)) {
      request.raw.socket.destroy();
      return reply.hijack();
    }
    request.receivedAt = performance.now();
    request.span = startRequestSpan(
      request.method,
      request.routeOptions.url,
      request.url.split("?")[0] ?? "/",
      request.headers,
    );
    inFlight += 1;
    metrics.inFlight.inc();
    // A request on a connection still open during the stop: the close of the connections between
    // requests waits for it to be answered (closeRemainingConnections runs again then).
    if (closing) clearTimeout(lingering);
    // Not `request.signal`: it follows the request stream, which closes once the body has been read.
    const disconnected = new AbortController();
    // `close` comes for every response, answered or cut (onResponse does not follow an aborted one).
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished) disconnected.abort(new Error("client disconnected"));
      else if (closing) answeredDuringStop += 1;
      request.deadline?.dispose();
      request.span?.end(reply.statusCode, !reply.raw.writableFinished);
      inFlight -= 1;
      metrics.inFlight.dec();
      if (closing && inFlight === 0) closeRemainingConnections();
    });
    const deadline = incomingDeadline(
      request.headers[REQUEST_TIMEOUT_HEADER.toLowerCase()],
      settings.handlerTimeoutMs,
      disconnected.signal,
    );
    // The caller has already given up: no work at all, not even parsing the body.
    if (deadline === null)
      return sendError(reply, 504, `deadline already exceeded: ${REQUEST_TIMEOUT_HEADER} is 0 or less`);
    request.deadline = deadline;
    // Answered before a byte of the body is read, with a lingering close (onSend).
    if (Number(request.headers["content-length"]) > BODY_LIMIT_BYTES) {
      const { status, message } = bodyTooLarge();
      return sendError(reply, status, message);
    }
  });
  app.addHook("onSend", async (request, reply) => {
    // Answered before its body has arrived (a 413, a 408, a 504 for a spent deadline): the connection
    // closes, but only once the client is done sending, so that it reads this answer (lingeringClose).
    // Closing at once (Fastify's way for a body over the limit) resets the connection under a client
    // still sending, and most clients then see EPIPE instead of the answer. The body gets the rest
    // of its own bound, API_REQUEST_TIMEOUT_MS from the request's headers.
    if (!request.raw.complete) {
      const elapsedMs = request.receivedAt > 0 ? performance.now() - request.receivedAt : 0;
      answeredEarly.closeAfterAnswer(request.raw, settings.requestTimeoutMs - elapsedMs);
      reply.header("connection", "close");
    }
    // A keep-alive client would otherwise send its next request to a server that is going away.
    if (closing) reply.header("connection", "close");
  });
  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unmatched";
    metrics.requests.inc({ route, status: reply.statusCode });
    // The router's own refusals (frameworkErrors) skip onRequest: no arrival time to measure from.
    if (request.receivedAt > 0)
      metrics.requestSeconds.observe({ route }, (performance.now() - request.receivedAt) / 1_000);
  });
  app.setErrorHandler<FastifyError>((error, request, reply) => {
    const { status, message, retryAfterSeconds } = errorReply(error, request);
    if (status === 500) request.log.error({ err: error, url: request.url }, "request failed");
    if (status === 503) request.log.warn({ err: error, url: request.url }, "database unavailable");
    // The caller's time ran out, but the database is why: the operator needs to know (a frozen server,
    // a failover, a pool too small for the load), the caller only gets its 504.
    if (error instanceof PostgresUnansweredError)
      request.log.warn(
        { url: request.url, waitingFor: error.waitingFor },
        "Postgres did not answer within the request's deadline",
      );
    return sendError(reply, status, message, retryAfterSeconds);
  });
  app.setNotFoundHandler((_request, reply) =>
    sendError(reply, 404, "no such route: the service answers POST /photos and GET /photos/:id"),
  );

  // JSON only: text/plain (which Fastify parses by default) and every other type get one 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    // No route: the 404 says so, whatever the body holds.
    if (request.is404) return done(null, undefined);
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  app.post("/photos", async (request, reply) => {
    const key = idempotencyKey(request.headers["idempotency-key"]);
    const body = newPhoto.safeParse(request.body);
    if (!body.success) throw new ApiError(400, z.prettifyError(body.error));
    const posted = await inRequestSpan(request, () =>
      settings.postPhoto(body.data, deadlineOf(request), key),
    );
    if (posted.replayed) reply.header("idempotent-replayed", "true");
    else metrics.gearLinks.inc({ outcome: posted.gearLink });
    return reply.code(201).send({ id: posted.id, gearLink: posted.gearLink });
  });

  app.get<{ Params: { id: string } }>("/photos/:id", async (request) => {
    const id = photoId.safeParse(request.params.id);
    const photo = id.success
      ? await deadlineConnection(settings.pool, deadlineOf(request), (db) => getPhoto(db, id.data))
      : null;
    if (!photo) throw new ApiError(404, "no such photo");
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
      const closedInTime = await settlesBefore(closed, drainDeadline);
      clearTimeout(lingering);
      if (closedInTime) return { clean: true, inFlightAtStop, drained: answeredDuringStop, cut: 0 };
      const cut = inFlight;
      const drained = answeredDuringStop;
      app.server.closeAllConnections();
      await closed;
      return { clean: false, inFlightAtStop, drained, cut };
    },
  };
}
