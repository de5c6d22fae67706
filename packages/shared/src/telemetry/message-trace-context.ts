import { type Context, propagation, ROOT_CONTEXT } from "@opentelemetry/api";

/**
 * The trace context an event carries from `enqueue` to its handler, as W3C headers in the outbox row,
 * then as SNS/SQS message attributes. With no SDK registered the API's propagator is a no-op: nothing
 * is written and nothing is read, so the headers a caller set travel as they are.
 */

/** `traceparent` (and `tracestate` when there is one) of the span in `ctx`; empty when tracing is off. */
export function traceHeaders(ctx: Context): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier;
}

/** The context a message's headers carry, to continue it; the root context when they carry none. */
export function contextFromHeaders(
  headers: Readonly<Record<string, string | readonly string[] | undefined>>,
): Context {
  return propagation.extract(ROOT_CONTEXT, headers);
}
