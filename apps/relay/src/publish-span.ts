import { type Link, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { MessagingAttributes, OutboxAttributes } from "@outbox/client";
import { linkFromHeaders } from "@outbox/shared";
import type { Chunk } from "./plan-chunks.js";

const TRACER_NAME = "@outbox/relay";

/** "orders" of arn:aws:sns:us-east-1:123456789012:orders: short enough for a span name. */
function topicName(topicArn: string): string {
  return topicArn.slice(topicArn.lastIndexOf(":") + 1);
}

/**
 * The span of one PublishBatch request: one span per request, because the request is what takes time
 * and fails as a whole. Its entries come from many traces (whatever enqueued them), so the span is a
 * root of its own with a LINK to each entry's creating span, read from the row's `traceparent`; a
 * parent could be only one of them. The message itself carries that `traceparent` on to the consumer,
 * whose handler span continues the enqueue's trace, not this one. Kind CLIENT: in the messaging
 * conventions a send span is PRODUCER only when it is the messages' creation context, which here
 * `enqueue`'s span is. A no-op when no SDK is registered.
 */
export function startPublishSpan(chunk: Chunk): Span {
  const links: Link[] = [];
  for (const row of chunk.rows) {
    const link = linkFromHeaders(row.headers, { [MessagingAttributes.messageId]: row.id });
    if (link !== undefined) links.push(link);
  }
  // Asked for each time: a tracer kept across an SDK's shutdown and re-registration keeps the first.
  return trace.getTracer(TRACER_NAME).startSpan(`publish ${topicName(chunk.topicArn)}`, {
    kind: SpanKind.CLIENT,
    // Not under whatever span happens to be active: each request starts a trace of its own.
    root: true,
    links,
    attributes: {
      [MessagingAttributes.system]: "aws_sns",
      [MessagingAttributes.operationType]: "send",
      [MessagingAttributes.operationName]: "publish",
      [MessagingAttributes.destinationName]: chunk.topicArn,
      [MessagingAttributes.batchMessageCount]: chunk.rows.length,
    },
  });
}

/**
 * Ends the span: an error when the request failed as a whole (`error`), or when SNS refused some of its
 * entries (`refused`, also counted in `outbox.failed_count`).
 */
export function endPublishSpan(
  span: Span,
  outcome: { readonly refused: number; readonly error?: string },
): void {
  if (outcome.error !== undefined) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error });
  } else if (outcome.refused > 0) {
    span.setAttribute(OutboxAttributes.failedCount, outcome.refused);
    span.setStatus({ code: SpanStatusCode.ERROR, message: `SNS refused ${outcome.refused} entries` });
  }
  span.end();
}
