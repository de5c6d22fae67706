// arn:partition:sns:region:account:name, the name being a standard or a FIFO topic's (AWS's rule:
// 1–256 letters, digits, hyphens and underscores, `.fifo` at the end of a FIFO topic).
const TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,251}(\.fifo)?$/;

/** Whether `value` is shaped like an SNS topic ARN: what the relay publishes to and the consumer trusts. */
export function isTopicArn(value: string): boolean {
  return TOPIC_ARN.test(value);
}
