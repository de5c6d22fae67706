export {
  type BatchHandler,
  type ConsumedEvent,
  defineBatchHandler,
  defineHandlers,
  type EventHandler,
  type EventMap,
  type HandlerContext,
  type HandlerEntry,
  type HandlerMap,
  type HandlerSet,
  type HandlerSetOptions,
  isPoisonMessageError,
  type ParsingHandler,
  PoisonMessageError,
} from "@outbox/client";
export type { SettingsInCode } from "@outbox/shared";
export { type Consumer, type ConsumerStats, type ConsumerSummary, createConsumer } from "./consumer.js";
export type { ConsumerOptions } from "./consumer-options.js";
export { ConsumerOptionsError, type PoisonKind } from "./errors.js";
export { startInboxRetention } from "./inbox/retention.js";
export type { DeliveryMode } from "./message/delivery.js";
export { CONSUMER_METRICS } from "./metrics.js";
export { POISON_REASON_ATTRIBUTE } from "./queue/dead-letter-queue.js";
export { type RunConsumerOptions, runConsumer } from "./run-consumer.js";
export { CONSUMER_PLAN_CACHE_MODE, consumerSettings, consumerTimeouts } from "./settings.js";
