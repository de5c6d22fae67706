import { RELAY_METRICS } from "@outbox/relay";
import * as iam from "aws-cdk-lib/aws-iam";
import type * as sns from "aws-cdk-lib/aws-sns";
import type { Construct } from "constructs";
import type { RelayBudget } from "./budget.js";
import { checkedDaemonService, type SharedServiceProps } from "./checked-daemon-service.js";
import type { DaemonService } from "./daemon-service.js";
import { METRICS_NAMESPACE } from "./metrics-namespace.js";
import { PrometheusEmfSidecar } from "./prometheus-emf-sidecar.js";
import type { OutboxWorkersStackProps } from "./stack-props.js";

export interface RelayServiceProps {
  readonly stackProps: OutboxWorkersStackProps;
  readonly shared: SharedServiceProps;
  readonly budget: RelayBudget;
  readonly topic: sns.ITopic;
  readonly startServices: boolean;
}

export interface RelayService {
  readonly daemon: DaemonService;
  /** The lag gauges forwarded to CloudWatch; undefined with `relay.lagMetric` false. */
  readonly metrics: PrometheusEmfSidecar | undefined;
}

/** The relay's service, allowed to publish to the stack's topic only, and its metrics sidecar. */
export function relayService(
  scope: Construct,
  { stackProps, shared, budget, topic, startServices }: RelayServiceProps,
): RelayService {
  const relayOptions = stackProps.relay ?? {};
  const daemon = checkedDaemonService(scope, "Relay", "relay", shared, {
    budget,
    options: relayOptions,
    computed: {
      RELAY_DRAIN_TIMEOUT_MS: String(budget.drainTimeoutMs),
      RELAY_TOPIC_ARNS: [
        `${relayOptions.logicalTopic ?? "events"}=${topic.topicArn}`,
        ...(stackProps.api ? [`${stackProps.api.photoTopic ?? "photos"}=${topic.topicArn}`] : []),
      ].join(","),
    },
    // Several relays claim side by side (FOR UPDATE SKIP LOCKED, per-key heads): two for availability.
    desiredCount: startServices ? (relayOptions.desiredCount ?? 2) : 0,
  });
  // PublishBatch is authorized as sns:Publish. This topic only.
  daemon.taskDefinition.addToTaskRolePolicy(
    new iam.PolicyStatement({ actions: ["sns:Publish"], resources: [topic.topicArn] }),
  );
  const metrics =
    (relayOptions.lagMetric ?? true)
      ? new PrometheusEmfSidecar(scope, "RelayMetrics", {
          taskDefinition: daemon.taskDefinition,
          opsPort: budget.opsPort,
          metricNames: [
            RELAY_METRICS.lag,
            RELAY_METRICS.unsent,
            RELAY_METRICS.topicsInOutage,
            RELAY_METRICS.blockedKeys,
          ],
          namespace: METRICS_NAMESPACE,
          service: "relay",
          ...(relayOptions.collectorImage ? { collectorImage: relayOptions.collectorImage } : {}),
          ...(stackProps.logRetention ? { logRetention: stackProps.logRetention } : {}),
        })
      : undefined;
  return { daemon, metrics };
}
