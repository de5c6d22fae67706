import { invalidParameter } from "../errors.js";
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
  return { SubscriptionArn: registry.subscribe(topic, protocol, endpoint, attributes).arn };
};
