import { context, isSpanContextValid, trace } from "@opentelemetry/api";

export interface TraceFields {
  trace_id?: string;
  span_id?: string;
}

/**
 * The pino mixin that puts the active span's ids on a log line, so a line can be found from its trace
 * and the other way round. No fields when no span is active, or tracing is off (the API's context is
 * then always the empty root). A fresh object each time: pino merges the line's fields into it.
 */
export function traceFields(): TraceFields {
  const spanContext = trace.getSpanContext(context.active());
  if (spanContext === undefined || !isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}
