import { attributeEntries } from "../xml.js";
import type { Action } from "./context.js";

export const getTopicAttributes: Action = ({ params, registry }) => {
  const topic = registry.topic(params.get("TopicArn"));
  return {
    Attributes: attributeEntries({
      TopicArn: topic.arn,
      Owner: registry.accountId,
      DisplayName: "",
      SubscriptionsConfirmed: String(topic.subscriptionArns.size),
      SubscriptionsPending: "0",
      SubscriptionsDeleted: "0",
      ...topic.attributes,
    }),
  };
};
