import { invalidParameter } from "../errors.js";
import { checkLargeTopicSubscriptions, checkMaximumMessageSize } from "../message-size.js";
import type { Action } from "./context.js";

const SETTABLE = new Set([
  "DisplayName",
  "Policy",
  "DeliveryPolicy",
  "ContentBasedDeduplication",
  "TracingConfig",
  "MaximumMessageSize",
]);

export const setTopicAttributes: Action = ({ params, registry }) => {
  const topic = registry.topic(params.get("TopicArn"));
  const name = params.get("AttributeName") ?? "";
  if (!SETTABLE.has(name)) throw invalidParameter("AttributeName");
  if (name === "ContentBasedDeduplication" && !topic.fifo) {
    throw invalidParameter("Content-based deduplication can only be set for FIFO topics");
  }
  const value = params.get("AttributeValue") ?? "";
  if (name === "MaximumMessageSize") {
    // Checked against the subscriptions the topic has now: raising the limit is refused, not
    // subscriptions dropped.
    const protocols = registry.subscriptionsOf(topic).map((subscription) => subscription.protocol);
    checkLargeTopicSubscriptions(checkMaximumMessageSize(value), protocols);
  }
  topic.attributes[name] = value;
  return null;
};
