import { attributeEntries } from "../xml.js";
import type { Action } from "./context.js";

export const getSubscriptionAttributes: Action = ({ params, registry }) => {
  const subscription = registry.subscription(params.get("SubscriptionArn"));
  return {
    Attributes: attributeEntries({
      SubscriptionArn: subscription.arn,
      TopicArn: subscription.topicArn,
      Protocol: subscription.protocol,
      Endpoint: subscription.endpoint,
      Owner: registry.accountId,
      ConfirmationWasAuthenticated: "true",
      PendingConfirmation: "false",
      RawMessageDelivery: "false",
      ...subscription.attributes,
    }),
  };
};
