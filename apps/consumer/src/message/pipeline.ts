import type { Message } from "@aws-sdk/client-sqs";
import type { HandlerSet } from "@outbox/client";
import { isBatchHandler } from "@outbox/client/internal";
import type { DrainDeadline, Logger } from "@outbox/shared";
import type { PostgresPool } from "kysely";
import type { ResultCounts } from "../loop/count-results.js";
import type { DatabaseOutage } from "../loop/database-outage.js";
import type { ConsumerMetrics } from "../metrics.js";
import type { VisibilityHeartbeat } from "../queue/heartbeat.js";
import type { MessageDelivery } from "./delivery.js";
import { type FateRules, type MessageFate, MessageFates } from "./fate.js";
import type { ClaimCheckReader } from "./fetch-claimed-payload.js";
import { handleMessage } from "./handle-message.js";
import { handleReceive } from "./handle-receive.js";

/** Everything a message's handling reads: createConsumer's, runHandlers' and the pipeline test's. */
export interface PipelineOptions<DB> extends Omit<FateRules, "database" | "log" | "metrics"> {
  /** Key of this consumer in the inbox. */
  readonly consumer: string;
  /** For the process span's destination. */
  readonly queueUrl: string;
  /** What a body may be unwrapped as. */
  readonly delivery: MessageDelivery;
  readonly handlerTimeoutMs: number;
  /** DB_STATEMENT_TIMEOUT_MS: the per-message limit only ever tightens it. */
  readonly statementTimeoutMs: number;
  readonly pool: PostgresPool;
  readonly handlers: HandlerSet<DB>;
  /** Where claim-checked payloads are fetched from; without it such a message is poison. */
  readonly claimCheck?: ClaimCheckReader;
  /** Keeps the message's lease ahead of its deadline while its transaction runs. */
  readonly heartbeat: Pick<VisibilityHeartbeat, "track" | "untrack">;
  /** Each message's deadline hangs from it, cut to what the drain has left. */
  readonly drain: DrainDeadline;
  /** During a drain, no message starts with less than this left (CONSUMER_VISIBILITY_MARGIN_MS). */
  readonly drainMarginMs: number;
  /** Whether the database is unreachable: a message then spends no attempt, it is handed back. */
  readonly database: Pick<DatabaseOutage, "down" | "explains">;
  readonly counts: ResultCounts;
  readonly log: Logger;
  readonly metrics: ConsumerMetrics;
}

/** What handle-message.ts and handle-receive.ts read: the options, and the rules of a message's fate. */
export interface MessageContext<DB> extends PipelineOptions<DB> {
  readonly fates: MessageFates;
}

/** Received message → its fate: decode, claim-checked payload, handler, inbox transaction. */
export interface MessagePipeline {
  /** The rules each fate is decided by (the queue asks them again when the DLQ refuses a copy). */
  readonly fates: MessageFates;
  /** Whether some event type's handler takes batches (a fallback that does runs one event at a time). */
  readonly batches: boolean;
  /** One message to its fate. */
  handle(message: Message, leaseExpiresAt: number): Promise<MessageFate>;
  /** A receive's messages, batch handlers' events in batches: one promise per message, in order. */
  handleReceive(messages: readonly Message[], leaseExpiresAt: number): Promise<MessageFate>[];
}

export function messagePipeline<DB>(options: PipelineOptions<DB>): MessagePipeline {
  const fates = new MessageFates(options);
  const ctx: MessageContext<DB> = { ...options, fates };
  const { handlers } = options;
  return {
    fates,
    batches: handlers.types.some((type) => {
      const entry = handlers.find(type);
      return entry !== undefined && isBatchHandler(entry);
    }),
    handle: (message, leaseExpiresAt) => handleMessage(ctx, message, leaseExpiresAt),
    handleReceive: (messages, leaseExpiresAt) => handleReceive(ctx, messages, leaseExpiresAt),
  };
}
