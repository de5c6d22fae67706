import { Annotations } from "aws-cdk-lib";
import * as iam from "aws-cdk-lib/aws-iam";
import type { Construct } from "constructs";
import { settingsFor } from "./budget.js";
import { checkedDaemonService, type SharedServiceProps } from "./checked-daemon-service.js";
import type { ClaimCheckBucket } from "./claim-check-bucket.js";
import { scaleConsumerOnQueue } from "./consumer-scaling.js";
import type { DaemonService } from "./daemon-service.js";
import { daemonTelemetry } from "./daemon-telemetry.js";
import type { Messaging } from "./messaging.js";
import type { ServiceBudgets } from "./service-budgets.js";
import type { OutboxWorkersStackProps } from "./stack-props.js";

export interface ConsumerServiceProps {
  readonly stackProps: OutboxWorkersStackProps;
  readonly shared: SharedServiceProps;
  readonly budgets: ServiceBudgets;
  readonly messaging: Messaging;
  readonly claimCheck: ClaimCheckBucket;
  readonly startServices: boolean;
}

/** The consumer's service (with its collector sidecar), allowed onto the stack's queue and DLQ only, scaled on the queue. */
export function consumerService(
  scope: Construct,
  { stackProps, shared, budgets, messaging, claimCheck, startServices }: ConsumerServiceProps,
): DaemonService {
  const consumerOptions = stackProps.consumer ?? {};
  const { consumer: budget, minTaskCount, maxTaskCount } = budgets;
  const { queue, deadLetterQueue } = messaging;
  // The daemon has no default handlers: a consumer deployed without them would only exit 78, and
  // one given both refuses to start (one set of handlers).
  if (!consumerOptions.handlersModule && !consumerOptions.handlersInImage)
    Annotations.of(scope).addError(
      "consumer.handlersModule (context consumerHandlersModule) is required: the path, inside your consumer image, of the module whose default export is defineHandlers(...); or consumer.handlersInImage (context consumerHandlersInImage=true) for an image whose entry point runs runConsumer({ handlers }) (docs/deployment.md)",
    );
  if (consumerOptions.handlersModule && consumerOptions.handlersInImage)
    Annotations.of(scope).addError(
      "consumer.handlersModule and consumer.handlersInImage exclude each other: the handlers are either a module our image loads or in your image's entry point",
    );
  const { daemon } = checkedDaemonService(scope, "Consumer", "consumer", shared, {
    budget,
    options: consumerOptions,
    computed: {
      CONSUMER_DRAIN_TIMEOUT_MS: String(budget.drainTimeoutMs),
      CONSUMER_WAIT_TIME_SECONDS: String(budget.waitTimeSeconds),
      CONSUMER_VISIBILITY_TIMEOUT_SECONDS: String(budget.visibilityTimeoutSeconds),
      CONSUMER_QUEUE_RETENTION_HOURS: String(budget.queueRetentionSeconds / 3600),
      CONSUMER_DELIVERY: messaging.delivery,
      // Unset, the daemon names itself after its queue (one queue per stack, so stacks sharing a
      // database never split events) and refuses to start over rows of the former default.
      ...(consumerOptions.name ? { CONSUMER_NAME: consumerOptions.name } : {}),
      CONSUMER_QUEUE_URL: queue.queueUrl,
      CONSUMER_DLQ_URL: deadLetterQueue.queueUrl,
      CONSUMER_CLAIM_CHECK_BUCKET: claimCheck.bucket.bucketName,
      ...(consumerOptions.handlersModule ? { CONSUMER_HANDLERS_MODULE: consumerOptions.handlersModule } : {}),
    },
    desiredCount: startServices ? minTaskCount : 0,
    telemetry: daemonTelemetry(stackProps, "consumer"),
  });
  // Receive, delete and extend/release (the *Batch calls authorize as the same actions): this queue only.
  daemon.taskDefinition.addToTaskRolePolicy(
    new iam.PolicyStatement({
      actions: ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"],
      resources: [queue.queueArn],
    }),
  );
  // Poison messages go to the DLQ at once (CONSUMER_DLQ_URL): send only, to the DLQ only.
  daemon.taskDefinition.addToTaskRolePolicy(
    new iam.PolicyStatement({ actions: ["sqs:SendMessage"], resources: [deadLetterQueue.queueArn] }),
  );
  // Claim-checked payloads: read only, from the claim check's bucket only.
  claimCheck.grantRead(daemon.taskDefinition.taskRole);
  if (startServices) {
    scaleConsumerOnQueue(daemon.service, queue, {
      minTaskCount,
      maxTaskCount,
      concurrency: Number(
        consumerOptions.environment?.CONSUMER_CONCURRENCY ?? settingsFor.consumer.concurrency.default,
      ),
      visibilityTimeoutSeconds: budget.visibilityTimeoutSeconds,
    });
  }
  return daemon;
}
