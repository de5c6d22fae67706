import { invalidParameter } from "../errors.js";
import type { Action } from "./context.js";

export const unsubscribe: Action = ({ params, registry }) => {
  const arn = params.get("SubscriptionArn");
  if (!arn) throw invalidParameter("SubscriptionArn");
  registry.unsubscribe(arn);
  return null;
};
