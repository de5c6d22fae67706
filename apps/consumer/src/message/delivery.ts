import { isTopicArn } from "@outbox/shared";

/**
 * How the queue's SNS subscription delivers (its RawMessageDelivery attribute): `raw` puts the
 * relay's body and message attributes on the SQS message as published; `envelope` wraps them in an
 * SNS notification document, the body.
 */
export type DeliveryMode = "raw" | "envelope";

/** What the consumer trusts a message's body to be. */
export interface MessageDelivery {
  readonly mode: DeliveryMode;
  /** Envelope delivery: the topics whose notifications are unwrapped; any other is poison. */
  readonly topicArns: ReadonlySet<string>;
}

/**
 * Why a delivery setting cannot work, worded for CONSUMER_DELIVERY / CONSUMER_TOPIC_ARNS, or
 * undefined. Envelope delivery without topics would unwrap nothing; topics with raw delivery are
 * never read, and whoever set them expects envelopes to be unwrapped.
 */
export function deliveryProblem(mode: DeliveryMode, topicArns: readonly string[]): string | undefined {
  if (mode === "envelope" && topicArns.length === 0) {
    return "is required with CONSUMER_DELIVERY=envelope: only notifications of these topics are unwrapped";
  }
  if (mode === "raw" && topicArns.length > 0) {
    return "is only read with CONSUMER_DELIVERY=envelope: raw delivery never unwraps a body";
  }
  const invalid = topicArns.filter((arn) => !isTopicArn(arn));
  if (invalid.length > 0) {
    return `expected SNS topic ARNs (arn:aws:sns:<region>:<account>:<topic>), got ${invalid.map((arn) => `"${arn}"`).join(", ")}`;
  }
  return undefined;
}

export function messageDelivery(mode: DeliveryMode, topicArns: readonly string[]): MessageDelivery {
  return { mode, topicArns: new Set(topicArns) };
}
