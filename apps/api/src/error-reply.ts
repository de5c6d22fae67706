import { DeadlineExceededError } from "@outbox/client";
import { connectionFailureIn, isQueryCanceled } from "@outbox/shared";
import type { FastifyError, FastifyRequest } from "fastify";
import { ApiError } from "./errors.js";
import { BODY_LIMIT_BYTES } from "./json-body.js";

export interface ErrorReply {
  readonly status: number;
  /** What was wrong, for the caller: the whole error body is `{ "error": message }`. */
  readonly message: string;
  /** Sent as `Retry-After`: the failure is passing, the same request may succeed then. */
  readonly retryAfterSeconds?: number;
}

/**
 * A caller told to come back after a database it cannot reach or a pool with no free connection:
 * long enough for a failover's DNS switch or a held transaction to end, short enough not to matter.
 */
const DATABASE_RETRY_AFTER_SECONDS = 1;

/** Fastify's own refusals, each as its one status and a message that says what to change. */
function frameworkReply(error: FastifyError, request: FastifyRequest): ErrorReply | undefined {
  switch (error.code) {
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return {
        status: 415,
        message: `Content-Type must be application/json, not ${request.headers["content-type"] ?? "missing"}`,
      };
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return bodyTooLarge();
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return { status: 400, message: "the body's length differs from its Content-Length" };
    case "FST_ERR_BAD_URL":
      return { status: 400, message: "the URL's path is not valid percent-encoding" };
    default:
      return undefined;
  }
}

export function bodyTooLarge(): ErrorReply {
  return { status: 413, message: `the body is larger than the limit of ${BODY_LIMIT_BYTES} bytes (1 MiB)` };
}

/**
 * The caller's time ran out: the handler cap, the request's deadline (a PostgresUnansweredError is
 * one), or Postgres cancelling for it (the SET LOCAL statement_timeout of the deadline transaction).
 */
function deadlineExceeded(error: FastifyError): boolean {
  return (
    error.code === "FST_ERR_HANDLER_TIMEOUT" ||
    error instanceof DeadlineExceededError ||
    isQueryCanceled(error)
  );
}

/**
 * Any error as the reply it gets. A 500 is our fault: the caller sees "internal error" (never a stack
 * or a SQL text) and the log has the rest.
 */
export function errorReply(error: FastifyError, request: FastifyRequest): ErrorReply {
  if (error instanceof ApiError) return { status: error.statusCode, message: error.message };
  if (deadlineExceeded(error)) {
    // The client's own slowness, not ours: its body had not arrived when its time ran out.
    if (!request.raw.complete)
      return { status: 408, message: "the request's body did not arrive within its deadline" };
    return {
      status: 504,
      message: "deadline exceeded: the request's time ran out before it could be answered",
    };
  }
  // Not our bug and not the caller's: Postgres is down or failing over, or every pooled connection
  // stayed busy past DB_CONNECT_TIMEOUT_MS. A 503 tells a client (and a load balancer) to retry.
  if (connectionFailureIn(error) !== undefined)
    return {
      status: 503,
      message: "the database is unavailable or has no free connection: retry later",
      retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
    };
  const known = frameworkReply(error, request);
  if (known) return known;
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return { status, message: error.message };
  return { status: 500, message: "internal error" };
}
