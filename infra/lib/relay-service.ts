import * as iam from "aws-cdk-lib/aws-iam";
import type * as sns from "aws-cdk-lib/aws-sns";
import type { Construct } from "constructs";
import type { RelayBudget } from "./budget.js";
import { checkedDaemonService, type SharedServiceProps } from "./checked-daemon-service.js";
import { claimCheckSendWithinHours } from "./claim-check-bucket.js";
import type { DaemonService } from "./daemon-service.js";
import { daemonTelemetry } from "./daemon-telemetry.js";
import type { OutboxWorkersStackProps } from "./stack-props.js";
import type { TelemetrySidecar } from "./telemetry-sidecar.js";

export interface RelayServiceProps {
  readonly stackProps: OutboxWorkersStackProps;
  readonly shared: SharedServiceProps;
  readonly budget: RelayBudget;
  readonly topic: sns.ITopic;
  readonly startServices: boolean;
}

export interface RelayService {
  readonly daemon: DaemonService;
  /** The sidecar forwarding the relay's metrics; undefined while they are not forwarded (`relay.lagMetric`). */
  readonly metrics: TelemetrySidecar | undefined;
}

/** The relay's service, allowed to publish to the stack's topic only, and its collector sidecar. */
export function relayService(
  scope: Construct,
  { stackProps, shared, budget, topic, startServices }: RelayServiceProps,
): RelayService {
  const relayOptions = stackProps.relay ?? {};
  const telemetry = daemonTelemetry(stackProps, "relay");
  const { daemon, telemetry: sidecar } = checkedDaemonService(scope, "Relay", "relay", shared, {
    budget,
    options: {
      ...relayOptions,
      // Said in the template: the claim check's lifecycle is derived from it (claim-check-bucket.ts).
      environment: {
        RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS: String(claimCheckSendWithinHours(stackProps)),
        ...relayOptions.environment,
      },
    },
    computed: {
      RELAY_DRAIN_TIMEOUT_MS: String(budget.drainTimeoutMs),
      RELAY_TOPIC_ARNS: relayTopicArns(stackProps, topic),
    },
    // Several relays claim side by side (FOR UPDATE SKIP LOCKED, per-key heads): two for availability.
    desiredCount: startServices ? (relayOptions.desiredCount ?? 2) : 0,
    telemetry,
  });
  // PublishBatch is authorized as sns:Publish. This topic only.
  daemon.taskDefinition.addToTaskRolePolicy(
    new iam.PolicyStatement({ actions: ["sns:Publish"], resources: [topic.topicArn] }),
  );
  // The relay reads the topic's MaximumMessageSize (its message size limit) at start-up and after
  // SNS refuses a message as too long; without it every topic is taken at 262 144 bytes.
  daemon.taskDefinition.addToTaskRolePolicy(
    new iam.PolicyStatement({ actions: ["sns:GetTopicAttributes"], resources: [topic.topicArn] }),
  );
  // The lag alarms need the gauges in CloudWatch: a traces-only sidecar does not count.
  const metrics = telemetry && telemetry.metrics.length > 0 ? sidecar : undefined;
  return { daemon, metrics };
}

/** The relay's RELAY_TOPIC_ARNS: its logical topic (and the photo service's) to the stack's topic. The console republishes by it too. */
export function relayTopicArns(stackProps: OutboxWorkersStackProps, topic: sns.ITopic): string {
  return [
    `${stackProps.relay?.logicalTopic ?? "events"}=${topic.topicArn}`,
    ...(stackProps.api ? [`${stackProps.api.photoTopic ?? "photos"}=${topic.topicArn}`] : []),
  ].join(",");
}
