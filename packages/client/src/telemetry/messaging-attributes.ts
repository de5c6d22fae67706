/**
 * Span attribute names from OpenTelemetry's messaging semantic conventions, written out here: the
 * conventions package exports them only from its unstable `incubating` entry point, which its own
 * authors advise libraries not to depend on.
 */
export const MessagingAttributes = {
  system: "messaging.system",
  operationType: "messaging.operation.type",
  operationName: "messaging.operation.name",
  destinationName: "messaging.destination.name",
  messageId: "messaging.message.id",
  batchMessageCount: "messaging.batch.message_count",
  consumerGroupName: "messaging.consumer.group.name",
} as const;

/** Attributes of our own, under one prefix so they are not mistaken for conventional ones. */
export const OutboxAttributes = {
  eventType: "outbox.event_type",
  /** How the consumer settled a message: processed, duplicate, failed, poison or released. */
  result: "outbox.result",
  /** Entries of a PublishBatch that SNS refused. */
  failedCount: "outbox.failed_count",
} as const;
