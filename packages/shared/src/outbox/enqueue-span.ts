import { type Context, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { traceHeaders } from "../telemetry/message-trace-context.js";
import { MessagingAttributes, OutboxAttributes } from "../telemetry/messaging-attributes.js";

/**
 * The tracer of `enqueue`'s spans. Asked for once per call rather than kept: a tracer kept across an
 * SDK's shutdown and a new registration would go on using the first SDK.
 */
export function enqueueTracer(): Tracer {
  return trace.getTracer("@outbox/shared");
}

export interface EnqueueSpan {
  readonly span: Span;
  /** The caller's headers, with this span's `traceparent`/`tracestate` when tracing is on. */
  readonly headers: Readonly<Record<string, string>>;
  /** Whether `headers` carry this span's context (false: they are the caller's as given). */
  readonly traced: boolean;
}

/**
 * Starts the PRODUCER span of one event, in messaging terms a "create" span: the event is created now
 * and sent later by the relay, whose publish span links back to this one. Its parent is whatever span
 * is active in `parent` (the HTTP request, the handler of the event that led to this one).
 * With no SDK registered this is the API's no-op: no span is recorded and the headers stay as given.
 */
export function startEnqueueSpan(
  tracer: Tracer,
  parent: Context,
  event: {
    readonly topic: string;
    readonly eventType: string;
    readonly headers?: Readonly<Record<string, string>>;
  },
  eventId: string,
): EnqueueSpan {
  const span = tracer.startSpan(
    `enqueue ${event.topic}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        [MessagingAttributes.system]: "aws_sns",
        [MessagingAttributes.operationType]: "create",
        [MessagingAttributes.operationName]: "enqueue",
        [MessagingAttributes.destinationName]: event.topic,
        [MessagingAttributes.messageId]: eventId,
        [OutboxAttributes.eventType]: event.eventType,
      },
    },
    parent,
  );
  const given = event.headers ?? {};
  const injected = traceHeaders(trace.setSpan(parent, span));
  if (injected.traceparent === undefined) return { span, headers: given, traced: false };
  // The caller's own trace headers give way as a pair: their tracestate next to our traceparent
  // would describe a different span.
  const { traceparent: _parent, tracestate: _state, ...rest } = given;
  return { span, headers: { ...rest, ...injected }, traced: true };
}

/** Ends the spans of an enqueue that wrote nothing. */
export function endFailed(spans: readonly Span[], error: unknown): void {
  for (const span of spans) {
    if (error instanceof Error) span.recordException(error);
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
    span.end();
  }
}
