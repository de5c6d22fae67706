import { invalidParameter } from "../errors.js";
import { checkLargeTopicSubscriptions, topicMessageLimit } from "../message-size.js";
import { queryStringMap } from "../query.js";
import type { Action } from "./context.js";
import { checkSubscriptionAttribute } from "./subscription-attributes.js";

/** Only `sqs` subscriptions exist here; they are confirmed at once, as SNS does for SQS endpoints. */
export const subscribe: Action = ({ params, registry }) => {
  const topic = registry.topic(params.get("TopicArn"));
  const protocol = params.get("Protocol");
  if (protocol !== "sqs") throw invalidParameter("Protocol: the local SNS emulator delivers to sqs only");
  const endpoint = params.get("Endpoint") ?? "";
  if (!/^arn:aws:sqs:[^:]+:[^:]+:[^:]+$/.test(endpoint)) throw invalidParameter("SQS endpoint ARN");
  const attributes = queryStringMap(params, "Attributes");
  for (const [name, value] of Object.entries(attributes)) checkSubscriptionAttribute(name, value);
  // The developer guide: past 100 subscriptions a topic above 256 KiB refuses new ones. A repeated
  // Subscribe of an existing endpoint adds none, so it is not refused.
  const existing = registry.subscriptionsOf(topic);
  if (!existing.some((s) => s.protocol === protocol && s.endpoint === endpoint)) {
    checkLargeTopicSubscriptions(topicMessageLimit(topic), [...existing.map((s) => s.protocol), protocol]);
  }
  return { SubscriptionArn: registry.subscribe(topic, protocol, endpoint, attributes).arn };
};
