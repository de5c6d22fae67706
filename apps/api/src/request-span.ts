import type { IncomingHttpHeaders } from "node:http";
import { type Context, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { contextFromHeaders } from "@outbox/shared";

const TRACER_NAME = "@outbox/api";

/** A request's SERVER span and the context its route runs in (the span active, so `enqueue` nests). */
export interface RequestSpan {
  readonly context: Context;
  /** `cut`: the connection closed before the response was sent. */
  end(statusCode: number, cut: boolean): void;
}

/**
 * The span of one request, continuing the caller's trace when its `traceparent` names one (W3C trace
 * context), so that the events it enqueues, their publish and their handlers are that trace's too.
 * Named and attributed as the HTTP semantic conventions say. A no-op when no SDK is registered.
 */
export function startRequestSpan(
  method: string,
  route: string | undefined,
  path: string,
  headers: IncomingHttpHeaders,
): RequestSpan {
  const parent = contextFromHeaders(headers);
  const span: Span = trace.getTracer(TRACER_NAME).startSpan(
    route === undefined ? method : `${method} ${route}`,
    {
      kind: SpanKind.SERVER,
      attributes: {
        "http.request.method": method,
        "url.path": path,
        ...(route === undefined ? {} : { "http.route": route }),
      },
    },
    parent,
  );
  return {
    context: trace.setSpan(parent, span),
    end(statusCode, cut) {
      if (cut) {
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message: "connection closed before the response was sent",
        });
      } else {
        span.setAttribute("http.response.status_code", statusCode);
        // A 4xx is the caller's mistake, not the server's failure (the conventions leave it unset).
        if (statusCode >= 500) {
          span.setAttribute("error.type", String(statusCode));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
      }
      span.end();
    },
  };
}
