import { invalidParameter } from "../errors.js";
import type { Action } from "./context.js";

const SETTABLE = new Set([
  "DisplayName",
  "Policy",
  "DeliveryPolicy",
  "ContentBasedDeduplication",
  "TracingConfig",
]);

export const setTopicAttributes: Action = ({ params, registry }) => {
  const topic = registry.topic(params.get("TopicArn"));
  const name = params.get("AttributeName") ?? "";
  if (!SETTABLE.has(name)) throw invalidParameter("AttributeName");
  if (name === "ContentBasedDeduplication" && !topic.fifo) {
    throw invalidParameter("Content-based deduplication can only be set for FIFO topics");
  }
  topic.attributes[name] = params.get("AttributeValue") ?? "";
  return null;
};
