/**
 * Span attribute names and values from OpenTelemetry's messaging semantic conventions (v1.44.0:
 * docs/messaging/messaging-spans.md, sns.md, sqs.md), written out here: the conventions package
 * exports them only from its unstable `incubating` entry point, which its own authors advise
 * libraries not to depend on.
 */
export const MessagingAttributes = {
  system: "messaging.system",
  operationType: "messaging.operation.type",
  operationName: "messaging.operation.name",
  /** The topic's or queue's name, never its ARN or URL: those have attributes of their own. */
  destinationName: "messaging.destination.name",
  messageId: "messaging.message.id",
  batchMessageCount: "messaging.batch.message_count",
  consumerGroupName: "messaging.consumer.group.name",
  /** The whole topic ARN, next to its name in `destinationName` (sns.md). */
  snsTopicArn: "aws.sns.topic.arn",
  /** The whole queue URL, next to its name in `destinationName` (sqs.md). */
  sqsQueueUrl: "aws.sqs.queue.url",
} as const;

/** `messaging.system` as the conventions spell each service: the two spellings differ on purpose there. */
export const MessagingSystem = {
  sns: "aws.sns",
  sqs: "aws_sqs",
} as const;

/** Attributes of our own, under one prefix so they are not mistaken for conventional ones. */
export const OutboxAttributes = {
  eventType: "outbox.event_type",
  /** How the consumer settled a message: processed, duplicate, failed, poison or released. */
  result: "outbox.result",
  /** Entries of a PublishBatch that SNS refused. */
  failedCount: "outbox.failed_count",
} as const;
