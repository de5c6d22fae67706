import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Logger } from "@outbox/shared";

/**
 * Go's `WriteTimeout`, which Node lacks: every request's answer is written out within `limitMs` of
 * its headers' arrival, or its connection is destroyed. Node's `requestTimeout` stops counting once
 * the body has arrived, and Fastify's `handlerTimeout` once the body has been read; after that,
 * nothing else ends a handler that ignores its deadline, nor an answer that a client which does not
 * read (TCP back-pressure) keeps unwritten: either would hold its connection, its handler and its
 * pool client for as long as the client likes.
 *
 * "Written" is the response's `finish`: its last byte handed to the kernel, so an answer stuck in
 * the socket's buffer behind a full TCP window counts as unwritten. Destroying the socket, not the
 * response: a pipelined request's response has no socket of its own until those before it are done.
 * The destroy ends the request's deadline too (the client has "disconnected"), so a handler that
 * heeds it stops.
 */
export function destroyUnwrittenResponses(server: Server, limitMs: number, log: Logger): void {
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    const timer = setTimeout(() => {
      const { socket } = request;
      if (response.writableFinished || socket.destroyed) return;
      log.warn(
        {
          method: request.method,
          url: request.url?.split("?")[0],
          limitMs,
          // Whether the answer had begun: a handler that never answered, or a client not reading it.
          answerStarted: response.headersSent,
        },
        "answer not written within API_REQUEST_TIMEOUT_MS: connection destroyed",
      );
      socket.destroy();
    }, limitMs);
    // A bound, not work: it must not keep a process alive that is otherwise done.
    timer.unref();
    response.once("close", () => clearTimeout(timer));
  });
}
