import { CfnOutput } from "aws-cdk-lib";
import type * as sns from "aws-cdk-lib/aws-sns";
import type { Construct } from "constructs";
import type { ApiLoadBalancer } from "./api-load-balancer.js";
import type { ConsumerBudget, RelayBudget } from "./budget.js";
import type { ClaimCheckBucket } from "./claim-check-bucket.js";
import type { Messaging } from "./messaging.js";
import type { MigrationTask } from "./migration-task.js";

export interface StackOutputsProps {
  readonly apiLoadBalancer: ApiLoadBalancer | undefined;
  readonly messaging: Messaging;
  readonly claimCheck: ClaimCheckBucket;
  readonly alarmTopic: sns.ITopic;
  readonly relayBudget: RelayBudget;
  readonly consumerBudget: ConsumerBudget;
  readonly migration: MigrationTask;
}

/** What an operator needs after the deployment: the URLs and ARNs, the stop timeouts, how to migrate. */
export function stackOutputs(scope: Construct, props: StackOutputsProps): void {
  const { apiLoadBalancer, messaging, migration } = props;
  if (apiLoadBalancer) {
    new CfnOutput(scope, "ApiUrl", {
      value: `${apiLoadBalancer.scheme}://${apiLoadBalancer.loadBalancer.loadBalancerDnsName}`,
    });
  }
  new CfnOutput(scope, "TopicArn", { value: messaging.topic.topicArn });
  new CfnOutput(scope, "QueueUrl", { value: messaging.queue.queueUrl });
  new CfnOutput(scope, "DeadLetterQueueUrl", { value: messaging.deadLetterQueue.queueUrl });
  new CfnOutput(scope, "SubscriptionDeadLetterQueueUrl", {
    value: messaging.subscriptionDeadLetterQueue.queueUrl,
  });
  new CfnOutput(scope, "ClaimCheckBucketName", {
    description: "S3ClaimCheck's bucket, for the applications that enqueue (claimCheckWriterRoleArns)",
    value: props.claimCheck.bucket.bucketName,
  });
  new CfnOutput(scope, "AlarmTopicArn", { value: props.alarmTopic.topicArn });
  new CfnOutput(scope, "RelayStopTimeoutSeconds", { value: String(props.relayBudget.stopTimeoutSeconds) });
  new CfnOutput(scope, "ConsumerStopTimeoutSeconds", {
    value: String(props.consumerBudget.stopTimeoutSeconds),
  });
  new CfnOutput(scope, "MigrationTaskDefinitionArn", {
    value: migration.taskDefinition.taskDefinitionArn,
  });
  new CfnOutput(scope, "MigrateCommand", {
    description: "Run once before the services start and before each new version; prints the task's ARN",
    value: migration.runTaskCommand,
  });
}
