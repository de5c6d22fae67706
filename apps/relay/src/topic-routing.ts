import { type ConfigProblem, isTopicArn } from "@outbox/shared";

/**
 * A relay that can route no row, or routes to something that is not a topic ARN, would mark every
 * row dead (unknown topic) or fail every PublishBatch: refuse it at start-up instead, naming the
 * variable.
 */
export function topicRoutingProblems(config: {
  readonly topicArns: Readonly<Record<string, string>>;
  readonly defaultTopicArn: string;
}): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (Object.keys(config.topicArns).length === 0 && config.defaultTopicArn === "") {
    problems.push({
      env: "RELAY_TOPIC_ARNS",
      message:
        "neither RELAY_TOPIC_ARNS nor RELAY_DEFAULT_TOPIC_ARN is set: every row would be dead at once (unknown topic); map the outbox topics to SNS topic ARNs",
    });
  }
  for (const [topic, arn] of Object.entries(config.topicArns)) {
    if (!isTopicArn(arn)) {
      problems.push({ env: "RELAY_TOPIC_ARNS", message: `${topic}: "${arn}" is not an SNS topic ARN` });
    }
  }
  if (config.defaultTopicArn !== "" && !isTopicArn(config.defaultTopicArn)) {
    problems.push({
      env: "RELAY_DEFAULT_TOPIC_ARN",
      message: `"${config.defaultTopicArn}" is not an SNS topic ARN`,
    });
  }
  return problems;
}
