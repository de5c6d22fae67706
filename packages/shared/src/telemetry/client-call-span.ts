import { type Attributes, context, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";

const TRACER_NAME = "@outbox/shared";

/** What a CLIENT span is called and says: built only when the span is. */
export interface ClientCallDescription {
  readonly name: string;
  readonly attributes: Attributes;
}

/**
 * Runs `call` inside a CLIENT span `describe` names, when there is a recorded span to hang it from:
 * a query or an AWS call made while handling a request or a message shows in that trace. Background
 * work (the relay's claim polls, the consumer's receives, many a second) runs under no span and
 * starts no trace of its own, which would drown the sampled ones; with no SDK registered the check is
 * all it costs (the description is not even built).
 */
export function inClientSpan<T>(
  describe: () => ClientCallDescription,
  call: () => Promise<T>,
  onResult?: (span: Span, result: T) => void,
): Promise<T> {
  const parent = context.active();
  if (!trace.getSpan(parent)?.isRecording()) return call();
  // Asked for each time: a tracer kept across an SDK's shutdown and re-registration keeps the first.
  const { name, attributes } = describe();
  const span = trace.getTracer(TRACER_NAME).startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
  return context.with(trace.setSpan(parent, span), call).then(
    (result) => {
      onResult?.(span, result);
      span.end();
      return result;
    },
    (error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      span.setStatus({ code: SpanStatusCode.ERROR, message });
      if (error instanceof Error) span.recordException(error);
      span.end();
      throw error;
    },
  );
}
