import { type Link, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { MessagingAttributes, MessagingSystem, OutboxAttributes } from "@outbox/client/internal";
import { contextFromHeaders, traceHeaders } from "@outbox/shared";
import type { Chunk } from "./entries.js";
import type { PublishEntry } from "./publisher.js";

const TRACER_NAME = "@outbox/relay";

/** "orders" of arn:aws:sns:us-east-1:123456789012:orders: the name the conventions want, ARN apart. */
function topicName(topicArn: string): string {
  return topicArn.slice(topicArn.lastIndexOf(":") + 1);
}

/** What a request's spans decide: the entries as sent (their trace context the relay's own), and the end. */
export interface PublishSpans {
  /** The request's span, under which the HTTP call runs. */
  readonly request: Span;
  /** The chunk's entries, each carrying the `traceparent` of its event's publish span. */
  readonly entries: readonly PublishEntry[];
  /** Ends every span: an error where the request failed (`error`) or SNS refused the entry. */
  end(outcome: { readonly refusedIds: ReadonlySet<string>; readonly error?: string }): void;
}

/**
 * Two kinds of span per PublishBatch request. The request's own (CLIENT, `publish <topic>`): the
 * request is what takes time and fails as a whole, and its entries come from many traces, so it is a
 * root with a LINK to each entry's `enqueue` span. And one per event (PRODUCER, `publish <topic>`),
 * a CHILD of its `enqueue` span, whose `traceparent` replaces the row's in the message: so the
 * consumer's span continues the event's trace under the relay's, and one trace runs from the request
 * that enqueued the event to its handler. A row without a trace context gets no span of its own and
 * travels as it is. With no SDK registered the propagator reads nothing, so no row has a context and
 * no per-event span is started.
 */
export function startPublishSpans(chunk: Chunk): PublishSpans {
  // Asked for each time: a tracer kept across an SDK's shutdown and re-registration keeps the first.
  const tracer = trace.getTracer(TRACER_NAME);
  // Both are "send" spans of the conventions (v1.44.0, sns.md), named `{operation} {destination}` with
  // the topic's name as the destination and its ARN beside it. Their kinds follow messaging-spans.md:
  // PRODUCER for the span whose context the message carries, CLIENT for the request's, whose it does not.
  const sendAttributes = {
    [MessagingAttributes.system]: MessagingSystem.sns,
    [MessagingAttributes.operationType]: "send",
    [MessagingAttributes.operationName]: "publish",
    [MessagingAttributes.destinationName]: topicName(chunk.topicArn),
    [MessagingAttributes.snsTopicArn]: chunk.topicArn,
  };
  const name = `publish ${topicName(chunk.topicArn)}`;
  const links: Link[] = [];
  const eventSpans = new Map<string, Span>();
  const entries = chunk.entries.map((entry, index) => {
    // Entries and rows are built index for index; the check is for the type.
    const row = chunk.rows[index];
    if (row === undefined) return entry;
    const created = contextFromHeaders(row.headers);
    const createdBy = trace.getSpanContext(created);
    if (createdBy === undefined || !trace.isSpanContextValid(createdBy)) return entry;
    links.push({ context: createdBy, attributes: { [MessagingAttributes.messageId]: row.id } });
    const span = tracer.startSpan(
      name,
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          ...sendAttributes,
          [MessagingAttributes.messageId]: row.id,
        },
      },
      created,
    );
    eventSpans.set(entry.id, span);
    return { ...entry, attributes: { ...entry.attributes, ...traceHeaders(trace.setSpan(created, span)) } };
  });
  const request = tracer.startSpan(name, {
    kind: SpanKind.CLIENT,
    // Not under whatever span happens to be active: each request starts a trace of its own.
    root: true,
    links,
    attributes: {
      ...sendAttributes,
      [MessagingAttributes.batchMessageCount]: chunk.rows.length,
    },
  });
  return {
    request,
    entries,
    end({ refusedIds, error }) {
      for (const [id, span] of eventSpans) {
        if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
        else if (refusedIds.has(id))
          span.setStatus({ code: SpanStatusCode.ERROR, message: "SNS refused it" });
        span.end();
      }
      if (error !== undefined) {
        request.setStatus({ code: SpanStatusCode.ERROR, message: error });
      } else if (refusedIds.size > 0) {
        request.setAttribute(OutboxAttributes.failedCount, refusedIds.size);
        request.setStatus({ code: SpanStatusCode.ERROR, message: `SNS refused ${refusedIds.size} entries` });
      }
      request.end();
    },
  };
}
