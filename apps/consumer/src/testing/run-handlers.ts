import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Message, MessageAttributeValue } from "@aws-sdk/client-sqs";
import { type HandlerSet, uuidv7 } from "@outbox/client";
import { MAX_BATCH_ENTRIES, messageAttributes } from "@outbox/client/internal";
import { createLogger, DrainDeadline, type Logger } from "@outbox/shared";
import type { PostgresPool } from "kysely";
import { Registry } from "prom-client";
import { type ConsumerOptions, type ConsumerTuning, tuningOption } from "../consumer-options.js";
import { ConsumerOptionsError, type PoisonKind } from "../errors.js";
import { ResultCounts } from "../loop/count-results.js";
import { DatabaseOutage } from "../loop/database-outage.js";
import { IntakeGate } from "../loop/intake-gate.js";
import { messageDelivery } from "../message/delivery.js";
import type { MessageFate } from "../message/fate.js";
import { messagePipeline } from "../message/pipeline.js";
import { createConsumerMetrics } from "../metrics.js";

/** An event to hand to the handlers, as the relay would publish it. */
export interface EventToDeliver {
  /** Default: a fresh UUIDv7. The id of an event delivered before delivers it again. */
  readonly id?: string;
  readonly type: string;
  /** The payload, sent as `JSON.stringify(payload)`. */
  readonly payload?: unknown;
  /** The message's body byte for byte, instead of `payload` (an `EnqueuedEvent` carries both). */
  readonly payloadJson?: string;
  /** More message attributes, e.g. `traceparent`. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The event as its message carried it: pass it to `runHandlers` again for a second delivery. */
export interface DeliveredEvent {
  readonly id: string;
  readonly type: string;
  readonly payloadJson: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The message's id (a new one per delivery, as SQS gives a re-published event). */
  readonly messageId: string;
}

/** How the consumer ended one event's message. */
export type HandlerRun =
  /** Committed with its inbox row: the message would be deleted. */
  | { readonly outcome: "processed"; readonly event: DeliveredEvent }
  /** Processed before by this consumer (its inbox row exists): the handler did not run. */
  | { readonly outcome: "duplicate"; readonly event: DeliveredEvent }
  /** To the dead-letter queue at once, never retried: the reason as `poison_reason` carries it. */
  | {
      readonly outcome: "poison";
      readonly event: DeliveredEvent;
      readonly reason: PoisonKind;
      readonly detail: string;
    }
  /** Rolled back, and retried later: what failed it. */
  | { readonly outcome: "failed"; readonly event: DeliveredEvent; readonly error: unknown }
  /** Handed back without spending an attempt: the database was unreachable. */
  | { readonly outcome: "released"; readonly event: DeliveredEvent };

/** The numeric options that matter without a queue: each as `createConsumer` takes it, same default and range. */
type RunTuning = Pick<
  ConsumerTuning,
  "handlerTimeoutMs" | "statementTimeoutMs" | "claimCheckFetchTimeoutMs" | "claimCheckMaxBytes"
>;

export interface RunHandlersOptions<DB> extends RunTuning {
  readonly handlers: HandlerSet<DB>;
  /** The pg pool of a database with the outbox's migrations applied (the `inbox` table). */
  readonly pool: PostgresPool;
  readonly events: readonly EventToDeliver[];
  /** The consumer's name, its key in the inbox (`createConsumer`'s `name`). Default "test". */
  readonly name?: string;
  /** SQS's ApproximateReceiveCount for every message: 1, a first delivery, by default. */
  readonly receiveCount?: number;
  /** The handlers' `context.log` and the consumer's own lines; silent by default. */
  readonly log?: Logger;
  /**
   * Where claim-checked payloads are fetched from, as `createConsumer` takes it; without it a
   * claim-checked event (its payload the pointer) is poison, `claim_check_not_configured`.
   */
  readonly claimCheck?: ConsumerOptions<DB>["claimCheck"];
}

/** The URL the messages name as their queue: in the process spans only, nothing is sent to it. */
const LOCAL_QUEUE_URL = "local:run-handlers";

/** The message the relay publishes for an event, as SQS delivers it raw (RawMessageDelivery). */
function deliveryOf(
  given: EventToDeliver,
  index: number,
  receiveCount: number,
): { message: Message; event: DeliveredEvent } {
  const body = given.payloadJson ?? JSON.stringify(given.payload);
  if (body === undefined) {
    throw new TypeError(`events[${index}]: payload must be JSON-serialisable, or give payloadJson`);
  }
  const id = given.id ?? uuidv7();
  const headers = given.headers ?? {};
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(messageAttributes(id, given.type, headers))) {
    attributes[name] = { DataType: "String", StringValue: value };
  }
  const messageId = randomUUID();
  return {
    message: {
      MessageId: messageId,
      ReceiptHandle: `receipt-${messageId}`,
      Body: body,
      MessageAttributes: attributes,
      Attributes: { ApproximateReceiveCount: String(receiveCount) },
    },
    event: { id, type: given.type, payloadJson: body, headers, messageId },
  };
}

function optionError(message: string): ConsumerOptionsError {
  return new ConsumerOptionsError(message);
}

/**
 * Hands `events` to `handlers` the way the consumer does, against your own database, without SQS:
 * each event becomes the message the relay would publish, and goes through the consumer's own
 * pipeline (decode, the handler's `parse`, the inbox transaction, batches and their fallback one
 * message at a time, the poison rules). Resolves how each event's message ended, in order.
 *
 * The events are received 10 at a time (what one SQS receive brings) and each receive is handled as
 * the consumer handles one, its messages at once: a batch handler's events share a transaction. Two
 * deliveries of one event in one call race as they would in production (one processed, one
 * duplicate, either way round); call `runHandlers` again for a later delivery.
 */
export async function runHandlers<DB>(options: RunHandlersOptions<DB>): Promise<HandlerRun[]> {
  const name = options.name ?? "test";
  if (name === "") throw optionError("name must not be empty: it is the consumer's key in the inbox");
  const handlerTimeoutMs = tuningOption("handlerTimeoutMs", options.handlerTimeoutMs);
  const statementTimeoutMs = tuningOption("statementTimeoutMs", options.statementTimeoutMs);
  const receiveCount = options.receiveCount ?? 1;
  if (!Number.isInteger(receiveCount) || receiveCount < 1) {
    throw optionError(`receiveCount must be a whole number from 1, got ${receiveCount}`);
  }
  const deliveries = options.events.map((event, index) => deliveryOf(event, index, receiveCount));

  const log = options.log ?? createLogger({ service: "run-handlers", version: "0", level: "silent" });
  const metrics = createConsumerMetrics(new Registry());
  // Ends the probing an unreachable database starts (DatabaseOutage) once the events are handled.
  const stopping = new AbortController();
  const pipeline = messagePipeline({
    consumer: name,
    queueUrl: LOCAL_QUEUE_URL,
    delivery: messageDelivery("raw", []),
    handlerTimeoutMs,
    statementTimeoutMs,
    pool: options.pool,
    handlers: options.handlers,
    claimCheck:
      options.claimCheck === undefined
        ? undefined
        : {
            ...options.claimCheck,
            fetchTimeoutMs: tuningOption("claimCheckFetchTimeoutMs", options.claimCheckFetchTimeoutMs),
            maxPayloadBytes: tuningOption("claimCheckMaxBytes", options.claimCheckMaxBytes),
          },
    // No lease to keep ahead of the deadline: no queue hands the message to anyone else.
    heartbeat: { track: () => {}, untrack: () => {} },
    // Never followed: no stop cuts a message's deadline short.
    drain: new DrainDeadline(),
    drainMarginMs: 0,
    database: new DatabaseOutage({
      pool: options.pool,
      probeTimeoutMs: statementTimeoutMs,
      gate: new IntakeGate(),
      stopping: stopping.signal,
      log,
      metrics,
    }),
    // The delays reach no queue: a failed run reports its cause alone.
    retryBaseSeconds: 1,
    retryMaxSeconds: 1,
    // What a DLQ would get is reported as the run's outcome.
    deadLetterQueue: true,
    counts: new ResultCounts(metrics),
    log,
    metrics,
  });

  const runs: HandlerRun[] = [];
  try {
    for (let start = 0; start < deliveries.length; start += MAX_BATCH_ENTRIES) {
      const receive = deliveries.slice(start, start + MAX_BATCH_ENTRIES);
      const messages = receive.map((delivery) => delivery.message);
      const leaseExpiresAt = performance.now() + handlerTimeoutMs;
      // allSettled, not all: a crash (a bug) is thrown once every message of the receive has ended.
      const ended = await Promise.allSettled(pipeline.handleReceive(messages, leaseExpiresAt));
      for (const [index, { event }] of receive.entries()) {
        const result = ended[index];
        if (result?.status !== "fulfilled") throw result?.reason;
        runs.push(runOf(result.value, event));
      }
    }
  } finally {
    stopping.abort();
  }
  return runs;
}

/** The fate the consumer decided, as the run reports it. */
function runOf(fate: MessageFate, event: DeliveredEvent): HandlerRun {
  switch (fate.result) {
    case "poison":
      return { outcome: "poison", event, reason: fate.reason.kind, detail: fate.reason.detail };
    case "failed":
      return { outcome: "failed", event, error: fate.cause };
    default:
      return { outcome: fate.result, event };
  }
}
