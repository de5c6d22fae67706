import { performance } from "node:perf_hooks";
import type { Message } from "@aws-sdk/client-sqs";
import { context } from "@opentelemetry/api";
import type { ConsumedEvent, Deadline } from "@outbox/client";
import type { Logger } from "@outbox/shared";
import { echoed, PoisonReason } from "../errors.js";
import { runInboxTransaction } from "../inbox/inbox-transaction.js";
import { messageDeadline, tooLateToStart } from "../loop/drain.js";
import type { Lease } from "../queue/heartbeat.js";
import { type DecodedMessage, decodeMessage } from "./decode.js";
import { drainExpired, type MessageFate, RELEASED } from "./fate.js";
import { fetchClaimedPayload } from "./fetch-claimed-payload.js";
import { type FoundHandler, findHandler } from "./find-handler.js";
import type { MessageContext } from "./pipeline.js";
import { startProcessSpan } from "./process-span.js";
import { receiptOf, receiveCountOf } from "./receipt.js";

/** A message ready for its inbox transaction: decoded, its payload in hand, its handler found. */
export interface PreparedMessage<DB> {
  readonly message: Message;
  readonly event: ConsumedEvent;
  readonly found: FoundHandler<DB>;
  /** The message's deadline; the lease below is kept ahead of it until the message's fate is known. */
  readonly deadline: Deadline;
  readonly lease: Lease;
}

/** A message prepared, or its fate when it could not get that far. */
export type Preparation<DB> = { readonly prepared: PreparedMessage<DB> } | { readonly fate: MessageFate };

/**
 * One received message, start to end: prepare it, run its inbox transaction. Resolves its fate;
 * rejects only on a bug, every failing message has a fate.
 */
export async function handleMessage<DB>(
  ctx: MessageContext<DB>,
  message: Message,
  leaseExpiresAt: number,
): Promise<MessageFate> {
  const preparation = await prepareMessage(ctx, message, leaseExpiresAt);
  return "fate" in preparation ? preparation.fate : runPrepared(ctx, preparation.prepared);
}

/**
 * Decodes a message, fetches its claim-checked payload if it has one and finds its handler; a
 * message that cannot get that far gets its fate here (released, retried or quarantined). From here
 * on its lease is kept ahead of its deadline.
 */
export async function prepareMessage<DB>(
  ctx: MessageContext<DB>,
  message: Message,
  leaseExpiresAt: number,
): Promise<Preparation<DB>> {
  const { fates } = ctx;
  // A message of a FIFO group whose turn comes late in the drain (others start on receipt, and the
  // dispatcher already checked for them).
  if (tooLateToStart(ctx.drain, ctx.drainMarginMs)) return { fate: RELEASED };
  const decoded = decodeMessage(message, ctx.delivery);
  if (decoded instanceof PoisonReason) return { fate: fates.quarantine(message, decoded) };

  // The deadline and the lease start before a claim-checked payload is fetched: the fetch is part of
  // the time the message gets, and its lease is kept ahead of it meanwhile.
  const deadline = messageDeadline(ctx.drain, ctx.handlerTimeoutMs);
  const lease: Lease = { ...receiptOf(message), deadline, expiresAt: leaseExpiresAt };
  ctx.heartbeat.track(lease);
  const endEarly = (fate: () => MessageFate): { fate: MessageFate } => {
    ctx.heartbeat.untrack(lease);
    deadline.dispose();
    return { fate: fate() };
  };
  let ready: DecodedMessage | PoisonReason = decoded;
  if (decoded.claimed !== undefined) {
    try {
      ready = await fetchClaimedPayload(ctx.claimCheck, decoded, deadline);
    } catch (error) {
      return endEarly(() => (drainExpired(error) ? RELEASED : fates.retry(message, error)));
    }
  }
  if (ready instanceof PoisonReason) {
    const reason = ready;
    return endEarly(() => fates.quarantine(message, reason));
  }
  const found = findHandler(ctx.handlers, ready);
  if (found instanceof PoisonReason) return endEarly(() => fates.quarantine(message, found));
  const event: ConsumedEvent = {
    id: ready.eventId,
    type: ready.eventType,
    payload: found.payload,
    headers: ready.headers,
    messageId: message.MessageId ?? "",
    receiveCount: receiveCountOf(message),
  };
  return { prepared: { message, event, found, deadline, lease } };
}

/** A prepared message's inbox transaction, and the fate it leads to. */
export async function runPrepared<DB>(
  ctx: MessageContext<DB>,
  prepared: PreparedMessage<DB>,
): Promise<MessageFate> {
  const { message, event, found, deadline, lease } = prepared;
  if (ctx.database.down) {
    ctx.heartbeat.untrack(lease);
    deadline.dispose();
    return RELEASED;
  }
  const started = performance.now();
  // Continues the trace the message carries. Only the handler and the retry's log line run in its
  // context: a flush timer the delete buffer starts serves many messages and must not inherit this
  // one's trace.
  const span = startProcessSpan(event, ctx.queueUrl, ctx.consumer);
  let fate: MessageFate | undefined;
  try {
    const result = await context.with(span.context, () =>
      runInboxTransaction({
        pool: ctx.pool,
        consumer: ctx.consumer,
        event,
        handle: found.handle,
        deadline,
        statementTimeoutMs: ctx.statementTimeoutMs,
        log: () => messageLog(ctx.log, event),
      }),
    );
    ctx.heartbeat.untrack(lease);
    fate = { result };
  } catch (error) {
    ctx.heartbeat.untrack(lease);
    span.fail(error);
    fate = await ctx.fates.afterFailure(message, error, span.context);
  } finally {
    deadline.dispose();
    span.end(fate?.result);
  }
  ctx.counts.observeHandler(fate.result, (performance.now() - started) / 1_000);
  return fate;
}

/** The pino child a handler's `log` is: made on first use, most handlers never log. */
export function messageLog(log: Logger, event: ConsumedEvent): Logger {
  return log.child({ eventId: event.id, eventType: echoed(event.type), messageId: event.messageId });
}
