import { invalidParameter } from "../errors.js";
import type { Action } from "./context.js";

/** Like AWS, deleting a topic that does not exist succeeds. */
export const deleteTopic: Action = ({ params, registry }) => {
  const arn = params.get("TopicArn");
  if (!arn) throw invalidParameter("TopicArn");
  registry.deleteTopic(arn);
  return null;
};
