import { invalidParameter } from "../errors.js";
import { checkMaximumMessageSize } from "../message-size.js";
import { queryStringMap } from "../query.js";
import type { Action } from "./context.js";

const NAME = /^[A-Za-z0-9_-]{1,256}$/;
const SETTABLE = new Set([
  "DisplayName",
  "Policy",
  "DeliveryPolicy",
  "FifoTopic",
  "ContentBasedDeduplication",
  "KmsMasterKeyId",
  "SignatureVersion",
  "TracingConfig",
  "FifoThroughputScope",
  "MaximumMessageSize",
]);

export const createTopic: Action = ({ params, registry }) => {
  const name = params.get("Name") ?? "";
  const requested = queryStringMap(params, "Attributes");
  for (const key of Object.keys(requested)) {
    if (!SETTABLE.has(key)) throw invalidParameter(`Attributes Reason: Unknown attribute ${key}`);
  }
  const fifo = requested.FifoTopic === "true";
  const isFifoName = name.endsWith(".fifo");
  if (!NAME.test(isFifoName ? name.slice(0, -5) : name) || name.length > 256) {
    throw invalidParameter("Topic Name");
  }
  if (fifo && !isFifoName) {
    throw invalidParameter(
      "Fifo Topic names must end with .fifo and must be made up of only uppercase and lowercase ASCII letters, numbers, underscores, and hyphens, and must be between 1 and 256 characters long.",
    );
  }
  if (!fifo && isFifoName) throw invalidParameter("Topic Name");
  if (!fifo && requested.ContentBasedDeduplication === "true") {
    throw invalidParameter("Attributes Reason: Content-based deduplication can only be set for FIFO topics");
  }

  // A new topic has no subscriptions yet, so only the range can be wrong.
  if (requested.MaximumMessageSize !== undefined) checkMaximumMessageSize(requested.MaximumMessageSize);

  const attributes = fifo ? { ContentBasedDeduplication: "false", ...requested } : requested;
  const existing = registry.topics.get(registry.topicArn(name));
  if (existing) {
    // Idempotent by name, but AWS refuses a re-create that would change the topic.
    const differs = Object.entries(requested).some(([k, v]) => existing.attributes[k] !== v);
    if (differs) throw invalidParameter("Attributes Reason: Topic already exists with different attributes");
    return { TopicArn: existing.arn };
  }
  return { TopicArn: registry.addTopic(name, fifo, attributes).arn };
};
