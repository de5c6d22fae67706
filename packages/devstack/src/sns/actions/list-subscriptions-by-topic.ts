import type { Action } from "./context.js";
import { page } from "./pagination.js";

export const listSubscriptionsByTopic: Action = ({ params, registry }) => {
  const topic = registry.topic(params.get("TopicArn"));
  const { items, nextToken } = page(registry.subscriptionsOf(topic), params.get("NextToken"));
  return {
    Subscriptions: {
      member: items.map((s) => ({
        TopicArn: s.topicArn,
        Protocol: s.protocol,
        SubscriptionArn: s.arn,
        Owner: registry.accountId,
        Endpoint: s.endpoint,
      })),
    },
    ...(nextToken ? { NextToken: nextToken } : {}),
  };
};
