import type * as OpenTelemetry from "@opentelemetry/api";
import type { Context, Span, Tracer } from "@opentelemetry/api";
import { thrownParts } from "../log/describe-error.js";
import { MessagingAttributes, MessagingSystem, OutboxAttributes } from "../telemetry/messaging-attributes.js";

type OpenTelemetryApi = typeof OpenTelemetry;

let loading: Promise<OpenTelemetryApi | undefined> | undefined;

/**
 * The OpenTelemetry API when the application has it installed. It is an optional peer: an application
 * without it enqueues untraced rather than carrying a tracing stack it does not use. Loaded once; any
 * failure other than its absence (a broken install) is not hidden.
 */
function openTelemetry(): Promise<OpenTelemetryApi | undefined> {
  loading ??= import("@opentelemetry/api").catch((error: unknown) => {
    const { code, message } = error as { code?: unknown; message?: unknown };
    // Only the package itself missing: a file missing inside it is a broken install, not an absence.
    if (code === "ERR_MODULE_NOT_FOUND" && String(message).includes("'@opentelemetry/api'")) return undefined;
    throw error;
  });
  return loading;
}

export type EnqueueSpan =
  | {
      readonly span: Span;
      /** The caller's headers, with this span's `traceparent` (and `tracestate`). */
      readonly headers: Readonly<Record<string, string>>;
      readonly traced: true;
    }
  | {
      /** Undefined without the OpenTelemetry API. */
      readonly span: Span | undefined;
      /** The caller's headers as given. */
      readonly headers: Readonly<Record<string, string>>;
      readonly traced: false;
    };

interface SpannedEvent {
  readonly topic: string;
  readonly eventType: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The spans of one `enqueue` call, all children of the context active when it began. */
export interface EnqueueTracing {
  start(event: SpannedEvent, eventId: string): EnqueueSpan;
  /** Ends every span started, the rows written. */
  end(): void;
  /** Ends every span started as failed: nothing was written. */
  fail(error: unknown): void;
}

const untraced: EnqueueTracing = {
  start: (event) => ({ span: undefined, headers: event.headers ?? {}, traced: false }),
  end: () => {},
  fail: () => {},
};

/**
 * The tracing of one `enqueue` call. The tracer is asked for per call rather than kept: a tracer kept
 * across an SDK's shutdown and a new registration would go on using the first SDK.
 */
export async function enqueueTracing(): Promise<EnqueueTracing> {
  const api = await openTelemetry();
  if (api === undefined) return untraced;
  const tracer = api.trace.getTracer("@outbox/client");
  const parent = api.context.active();
  const spans: Span[] = [];
  return {
    start(event, eventId) {
      const started = startEnqueueSpan(api, tracer, parent, event, eventId);
      if (started.span !== undefined) spans.push(started.span);
      return started;
    },
    end() {
      for (const span of spans) span.end();
    },
    fail(error) {
      const exception = thrownParts(error);
      for (const span of spans) {
        span.recordException(exception);
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: exception.message });
        span.end();
      }
    },
  };
}

/**
 * Starts the PRODUCER span of one event, in messaging terms a "create" span: the event is created now
 * and sent later by the relay, whose publish span links back to this one. Its parent is whatever span
 * is active in `parent` (the HTTP request, the handler of the event that led to this one).
 * With no SDK registered this is the API's no-op: no span is recorded and the headers stay as given.
 */
function startEnqueueSpan(
  api: OpenTelemetryApi,
  tracer: Tracer,
  parent: Context,
  event: SpannedEvent,
  eventId: string,
): EnqueueSpan {
  const span = tracer.startSpan(
    `enqueue ${event.topic}`,
    {
      kind: api.SpanKind.PRODUCER,
      attributes: {
        [MessagingAttributes.system]: MessagingSystem.sns,
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
  // The same injection as the daemons' `traceHeaders`, on the API this package could load.
  const injected: Record<string, string> = {};
  api.propagation.inject(api.trace.setSpan(parent, span), injected);
  if (injected.traceparent === undefined) return { span, headers: given, traced: false };
  // The caller's own trace headers give way as a pair: their tracestate next to our traceparent
  // would describe a different span.
  const { traceparent: _parent, tracestate: _state, ...rest } = given;
  return { span, headers: { ...rest, ...injected }, traced: true };
}
