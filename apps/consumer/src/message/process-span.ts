import { type Context, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { ConsumedEvent } from "@outbox/client";
import { MessagingAttributes, MessagingSystem, OutboxAttributes, thrownParts } from "@outbox/client/internal";
import { contextFromHeaders } from "@outbox/shared";
import type { MessageResult } from "../metrics.js";

const TRACER_NAME = "@outbox/consumer";

export interface ProcessSpan {
  /** The span made active: run the handler in it, so its spans nest and its log lines carry the trace. */
  readonly context: Context;
  /** Marks the span failed with the error the handling ended on. */
  fail(error: unknown): void;
  /** `result` is undefined only when handling the message itself threw (a bug). */
  end(result: MessageResult | undefined): void;
}

/** "orders" of https://sqs.us-east-1.amazonaws.com/123456789012/orders. */
function queueName(queueUrl: string): string {
  return queueUrl.slice(queueUrl.lastIndexOf("/") + 1);
}

/**
 * The CONSUMER ("process") span of one message, continuing the trace its `traceparent` header
 * carries: its parent is the span that enqueued the event, in whichever process that was. Without a
 * `traceparent`, or with no SDK registered, it is a root span, or the API's no-op.
 */
export function startProcessSpan(event: ConsumedEvent, queueUrl: string, consumer: string): ProcessSpan {
  const parent = contextFromHeaders(event.headers);
  // Asked for each time: a tracer kept across an SDK's shutdown and re-registration keeps the first.
  const span: Span = trace.getTracer(TRACER_NAME).startSpan(
    `process ${queueName(queueUrl)}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        [MessagingAttributes.system]: MessagingSystem.sqs,
        [MessagingAttributes.operationType]: "process",
        [MessagingAttributes.operationName]: "process",
        [MessagingAttributes.destinationName]: queueName(queueUrl),
        [MessagingAttributes.sqsQueueUrl]: queueUrl,
        [MessagingAttributes.consumerGroupName]: consumer,
        // The event id, as on the enqueue and publish spans: the id the message carries (`event_id`) and
        // the inbox knows it by. SNS's and SQS's own MessageIds change with every hop and re-publish.
        [MessagingAttributes.messageId]: event.id,
        [OutboxAttributes.eventType]: event.type,
      },
    },
    parent,
  );
  return {
    context: trace.setSpan(parent, span),
    fail(error) {
      // Read once, safely: a handler may throw anything, and recording it must not throw.
      const exception = thrownParts(error);
      span.recordException(exception);
      span.setStatus({ code: SpanStatusCode.ERROR, message: exception.message });
    },
    end(result) {
      if (result !== undefined) span.setAttribute(OutboxAttributes.result, result);
      span.end();
    },
  };
}
