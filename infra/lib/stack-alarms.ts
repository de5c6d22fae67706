import { RELAY_METRICS } from "@outbox/relay";
import { Duration } from "aws-cdk-lib";
import * as sns from "aws-cdk-lib/aws-sns";
import * as subscriptions from "aws-cdk-lib/aws-sns-subscriptions";
import type { Construct } from "constructs";
import { OutboxAlarms } from "./alarms.js";
import type { DaemonService } from "./daemon-service.js";
import { LOGGED, LogEventMetric, loggedAs } from "./log-event-metric.js";
import type { Messaging } from "./messaging.js";
import { METRICS_NAMESPACE } from "./metrics-namespace.js";
import { ServiceAlarms } from "./service-alarms.js";
import type { OutboxWorkersStackProps } from "./stack-props.js";
import type { TelemetrySidecar } from "./telemetry-sidecar.js";

export interface StackAlarmsProps {
  readonly stackProps: OutboxWorkersStackProps;
  readonly messaging: Messaging;
  readonly relay: DaemonService;
  readonly relayMetrics: TelemetrySidecar | undefined;
  readonly consumer: DaemonService;
  readonly api: DaemonService | undefined;
}

export interface StackAlarms {
  /** Where every alarm goes (and `alarmEmail`, when given). */
  readonly alarmTopic: sns.Topic;
  readonly alarms: OutboxAlarms;
  readonly relayAlarms: ServiceAlarms;
  readonly consumerAlarms: ServiceAlarms;
  readonly apiAlarms: ServiceAlarms | undefined;
}

/** The alarm topic, what the outbox and the inbox promise (OutboxAlarms), and each service's own alarms. */
export function stackAlarms(
  scope: Construct,
  { stackProps, messaging, relay, relayMetrics, consumer, api }: StackAlarmsProps,
): StackAlarms {
  const alarmTopic = new sns.Topic(scope, "AlarmTopic");
  if (stackProps.alarmEmail) {
    alarmTopic.addSubscription(new subscriptions.EmailSubscription(stackProps.alarmEmail));
  }
  // Events that are log lines only: each line counts once (see log-event-metric.ts).
  const relayDeadEvents = new LogEventMetric(scope, "RelayDeadEventLines", {
    logGroup: relay.logGroup,
    pattern: loggedAs(LOGGED.eventDead),
    namespace: METRICS_NAMESPACE,
    metricName: "dead_events",
    service: "relay",
  });
  const consumerHandlerFailures = new LogEventMetric(scope, "ConsumerHandlerFailureLines", {
    logGroup: consumer.logGroup,
    pattern: loggedAs(LOGGED.messageFailed),
    namespace: METRICS_NAMESPACE,
    metricName: "handler_failures",
    service: "consumer",
  });
  const alarms = new OutboxAlarms(scope, "Alarms", {
    queue: messaging.queue,
    deadLetterQueue: messaging.deadLetterQueue,
    subscriptionDeadLetterQueue: messaging.subscriptionDeadLetterQueue,
    ...(relayMetrics
      ? {
          relayLag: relayMetrics.metric(RELAY_METRICS.lag),
          relayTopicsInOutage: relayMetrics.metric(RELAY_METRICS.topicsInOutage),
          relayBlockedKeys: relayMetrics.metric(RELAY_METRICS.blockedKeys),
        }
      : {}),
    relayDeadEvents: relayDeadEvents.metric(),
    consumerHandlerFailures: consumerHandlerFailures.metric(),
    oldestMessageAgeThreshold: stackProps.oldestMessageAgeAlarm ?? Duration.minutes(5),
    relayLagThreshold: stackProps.relayLagAlarm ?? Duration.minutes(1),
    handlerFailuresPerMinute: stackProps.consumer?.handlerFailureAlarm ?? 5,
    alarmTopic,
  });
  const serviceAlarms = (id: string, daemon: DaemonService) =>
    new ServiceAlarms(scope, id, { daemon, namespace: METRICS_NAMESPACE, alarmTopic });
  return {
    alarmTopic,
    alarms,
    relayAlarms: serviceAlarms("RelayAlarms", relay),
    consumerAlarms: serviceAlarms("ConsumerAlarms", consumer),
    apiAlarms: api ? serviceAlarms("ApiAlarms", api) : undefined,
  };
}
