import { performance } from "node:perf_hooks";
import type { Message } from "@aws-sdk/client-sqs";
import { type Context, context } from "@opentelemetry/api";
import { type ConsumedEvent, type Deadline, type HandlerSet, isPoisonMessageError } from "@outbox/client";
import { describeError } from "@outbox/client/internal";
import type { Logger } from "@outbox/shared";
import type { PostgresPool } from "kysely";
import { DrainExpiredError, echoed, PoisonReason } from "../errors.js";
import { runInboxTransaction, TransactionEscapedError } from "../inbox/inbox-transaction.js";
import type { ResultCounts } from "../loop/count-results.js";
import type { DatabaseOutage } from "../loop/database-outage.js";
import type { DrainDeadline } from "../loop/drain.js";
import type { MessageResult } from "../metrics.js";
import type { Lease, VisibilityHeartbeat } from "../queue/heartbeat.js";
import type { MessageSettler } from "../queue/settle.js";
import { type DecodedMessage, decodeMessage } from "./decode.js";
import type { MessageDelivery } from "./delivery.js";
import { type ClaimCheckReader, fetchClaimedPayload } from "./fetch-claimed-payload.js";
import { type FoundHandler, findHandler } from "./find-handler.js";
import { startProcessSpan } from "./process-span.js";
import { receiveCountOf } from "./receipt.js";

export interface MessageSettings {
  /** Key of this consumer in the inbox. */
  readonly consumer: string;
  /** For the process span's destination. */
  readonly queueUrl: string;
  /** What a body may be unwrapped as. */
  readonly delivery: MessageDelivery;
  readonly handlerTimeoutMs: number;
  /** DB_STATEMENT_TIMEOUT_MS: the per-message limit only ever tightens it. */
  readonly statementTimeoutMs: number;
}

export interface MessageDeps<DB> {
  readonly pool: PostgresPool;
  readonly handlers: HandlerSet<DB>;
  /** Keeps the message's lease ahead of its deadline while its transaction runs. */
  readonly heartbeat: Pick<VisibilityHeartbeat, "track" | "untrack">;
  readonly settle: MessageSettler;
  readonly drain: DrainDeadline;
  readonly counts: ResultCounts;
  /** Whether the database is unreachable: a message then spends no attempt, it is handed back. */
  readonly database: Pick<DatabaseOutage, "down" | "explains">;
  readonly log: Logger;
  /** Where claim-checked payloads are fetched from; without it such a message is poison. */
  readonly claimCheck?: ClaimCheckReader;
}

/**
 * What the value a message's handling threw means for the message. A handler may throw anything,
 * even a Proxy whose prototype cannot be read: whatever cannot be classified is a plain failure.
 * Poison is known by its brand: the handlers may carry their own copy of @outbox/client.
 */
function howItEnded(error: unknown): "poison" | "left its transaction" | "drain expired" | "failed" {
  try {
    if (isPoisonMessageError(error)) return "poison";
    if (error instanceof TransactionEscapedError) return "left its transaction";
    if (error instanceof DrainExpiredError) return "drain expired";
  } catch {
    // Not one of ours.
  }
  return "failed";
}

/** A message ready for its inbox transaction: decoded, its payload in hand, its handler found. */
export interface PreparedMessage<DB> {
  readonly message: Message;
  readonly event: ConsumedEvent;
  readonly found: FoundHandler<DB>;
  /** The message's deadline; the lease below is kept ahead of it until the message is settled. */
  readonly deadline: Deadline;
  readonly lease: Lease;
}

/**
 * One received message, start to end: prepare it, run its inbox transaction, settle it. Resolves
 * how it ended; rejects only on a bug, every failing message has an outcome.
 */
export async function processMessage<DB>(
  settings: MessageSettings,
  deps: MessageDeps<DB>,
  message: Message,
  leaseExpiresAt: number,
): Promise<MessageResult> {
  const prepared = await prepareMessage(settings, deps, message, leaseExpiresAt);
  return typeof prepared === "string" ? prepared : runPreparedMessage(settings, deps, prepared);
}

/**
 * Decodes a message, fetches its claim-checked payload if it has one and finds its handler; a
 * message that cannot get that far is settled here (released, retried or quarantined) and its
 * result returned instead. From here on its lease is kept ahead of its deadline.
 */
export async function prepareMessage<DB>(
  settings: MessageSettings,
  deps: MessageDeps<DB>,
  message: Message,
  leaseExpiresAt: number,
): Promise<PreparedMessage<DB> | MessageResult> {
  const { settle } = deps;
  // A message of a FIFO group whose turn comes late in the drain (others start on receipt, and the
  // dispatcher already checked for them).
  if (deps.drain.tooLateToStart()) return settle.release(message);
  const decoded = decodeMessage(message, settings.delivery);
  if (decoded instanceof PoisonReason) return settle.quarantine(message, decoded);

  // The deadline and the lease start before a claim-checked payload is fetched: the fetch is part of
  // the time the message gets, and its lease is kept ahead of it meanwhile.
  const deadline = deps.drain.messageDeadline(settings.handlerTimeoutMs);
  const lease: Lease = {
    messageId: message.MessageId ?? "",
    receiptHandle: message.ReceiptHandle ?? "",
    deadline,
    expiresAt: leaseExpiresAt,
  };
  deps.heartbeat.track(lease);
  const endEarly = (end: () => Promise<MessageResult>): Promise<MessageResult> => {
    deps.heartbeat.untrack(lease);
    deadline.dispose();
    return end();
  };
  let ready: DecodedMessage | PoisonReason = decoded;
  if (decoded.claimed !== undefined) {
    try {
      ready = await fetchClaimedPayload(deps.claimCheck, decoded, deadline);
    } catch (error) {
      return endEarly(() =>
        howItEnded(error) === "drain expired" ? settle.release(message) : settle.retry(message, error),
      );
    }
  }
  if (ready instanceof PoisonReason) {
    const reason = ready;
    return endEarly(() => settle.quarantine(message, reason));
  }
  const found = findHandler(deps.handlers, ready);
  if (found instanceof PoisonReason) return endEarly(() => settle.quarantine(message, found));
  const event: ConsumedEvent = {
    id: ready.eventId,
    type: ready.eventType,
    payload: found.payload,
    headers: ready.headers,
    messageId: message.MessageId ?? "",
    receiveCount: receiveCountOf(message),
  };
  return { message, event, found, deadline, lease };
}

/**
 * A prepared message's inbox transaction, then its settling: delete after the commit, retry,
 * release or quarantine.
 */
export async function runPreparedMessage<DB>(
  settings: MessageSettings,
  deps: MessageDeps<DB>,
  prepared: PreparedMessage<DB>,
): Promise<MessageResult> {
  const { settle } = deps;
  const { message, event, found, deadline, lease } = prepared;
  if (deps.database.down) {
    deps.heartbeat.untrack(lease);
    deadline.dispose();
    return settle.release(message);
  }
  const started = performance.now();
  // Continues the trace the message carries. Only the handler and the retry's log line run in its
  // context: a flush timer the delete buffer starts (settle.delete, quarantine) serves many messages
  // and must not inherit this one's trace.
  const span = startProcessSpan(event, settings.queueUrl, settings.consumer);
  let result: MessageResult | undefined;
  try {
    result = await context.with(span.context, () =>
      runInboxTransaction({
        pool: deps.pool,
        consumer: settings.consumer,
        event,
        handle: found.handle,
        deadline,
        statementTimeoutMs: settings.statementTimeoutMs,
        log: () => messageLog(deps.log, event),
      }),
    );
    deps.heartbeat.untrack(lease);
    settle.delete(lease);
  } catch (error) {
    deps.heartbeat.untrack(lease);
    span.fail(error);
    result = await settleFailed(deps, message, error, span.context);
  } finally {
    deadline.dispose();
    span.end(result);
  }
  deps.counts.observeHandler(result, (performance.now() - started) / 1_000);
  return result;
}

/** The pino child a handler's `log` is: made on first use, most handlers never log. */
export function messageLog(log: Logger, event: ConsumedEvent): Logger {
  return log.child({ eventId: event.id, eventType: echoed(event.type), messageId: event.messageId });
}

/**
 * Settles a message whose transaction failed, by what the failure means (see howItEnded). A handler
 * that left its transaction goes to the DLQ at once, like poison, though the message is not to
 * blame: each retry would run the broken handler again and commit its later writes once more,
 * outside any inbox row. Redriven once the handler is fixed (docs/consumer.md).
 */
export async function settleFailed<DB>(
  deps: MessageDeps<DB>,
  message: Message,
  error: unknown,
  spanContext: Context,
): Promise<MessageResult> {
  const ending = howItEnded(error);
  if (ending === "poison") {
    return deps.settle.quarantine(message, new PoisonReason("rejected_by_handler", describeError(error)));
  }
  if (ending === "left its transaction") {
    deps.log.error({ messageId: message.MessageId, err: error }, "handler left its inbox transaction");
    return deps.settle.quarantine(
      message,
      new PoisonReason("handler_left_transaction", describeError(error)),
    );
  }
  // Released at once, not retried later: neither a stop nor an unreachable database is the message's fault.
  if (ending === "drain expired" || (await deps.database.explains(error)))
    return deps.settle.release(message);
  return context.with(spanContext, () => deps.settle.retry(message, error));
}
