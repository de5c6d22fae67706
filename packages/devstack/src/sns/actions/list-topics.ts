import type { Action } from "./context.js";
import { page } from "./pagination.js";

export const listTopics: Action = ({ params, registry }) => {
  const { items, nextToken } = page([...registry.topics.keys()], params.get("NextToken"));
  return {
    Topics: { member: items.map((TopicArn) => ({ TopicArn })) },
    ...(nextToken ? { NextToken: nextToken } : {}),
  };
};
