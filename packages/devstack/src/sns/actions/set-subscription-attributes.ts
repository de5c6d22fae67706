import type { Action } from "./context.js";
import { checkSubscriptionAttribute } from "./subscription-attributes.js";

export const setSubscriptionAttributes: Action = ({ params, registry }) => {
  const subscription = registry.subscription(params.get("SubscriptionArn"));
  const name = params.get("AttributeName") ?? "";
  const value = params.get("AttributeValue") ?? "";
  checkSubscriptionAttribute(name, value);
  subscription.attributes[name] = value;
  return null;
};
