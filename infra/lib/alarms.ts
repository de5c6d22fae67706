import { Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as actions from "aws-cdk-lib/aws-cloudwatch-actions";
import type * as sns from "aws-cdk-lib/aws-sns";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";

export interface OutboxAlarmsProps {
  readonly queue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  /** The subscription's DLQ: what SNS could not deliver to the queue. */
  readonly subscriptionDeadLetterQueue: sqs.IQueue;
  /** The relay's lag (`RELAY_METRICS.lag` in CloudWatch), when a metric path exists. */
  readonly relayLag?: cloudwatch.IMetric;
  /** Topics a relay is backing off from because whole PublishBatch requests fail (`RELAY_METRICS.topicsInOutage`). */
  readonly relayTopicsInOutage?: cloudwatch.IMetric;
  /** Ordering keys held by a dead row (`RELAY_METRICS.blockedKeys`). */
  readonly relayBlockedKeys?: cloudwatch.IMetric;
  /** Outbox rows the relay marked dead, per minute. */
  readonly relayDeadEvents: cloudwatch.IMetric;
  /** Consumer handler failures (messages given back for a retry), per minute. */
  readonly consumerHandlerFailures: cloudwatch.IMetric;
  /** Alarm when the queue's oldest message is older than this. */
  readonly oldestMessageAgeThreshold: Duration;
  /** Alarm when the oldest unsent outbox row is older than this. */
  readonly relayLagThreshold: Duration;
  /** Alarm when handlers fail more often than this per minute (2 of 3 minutes). */
  readonly handlerFailuresPerMinute: number;
  /** Where alarms (and their recovery) are sent. */
  readonly alarmTopic: sns.ITopic;
}

/** Minutes in a row SNS may fail a relay's whole requests before it is an outage worth a page. */
const SNS_OUTAGE_MINUTES = 3;

/**
 * The signals about the events themselves: something reached a DLQ (a poison message, a handler that
 * failed every attempt, or a delivery SNS gave up on), an outbox row died, a dead row holds its key,
 * handlers are failing, the consumer falls behind (oldest message age), the relay falls behind (oldest
 * unsent outbox row), SNS fails the relay's requests as a whole.
 */
export class OutboxAlarms extends Construct {
  readonly deadLetters: cloudwatch.Alarm;
  readonly undeliveredBySns: cloudwatch.Alarm;
  readonly deadEvents: cloudwatch.Alarm;
  readonly handlerFailures: cloudwatch.Alarm;
  readonly queueAge: cloudwatch.Alarm;
  readonly relayLag: cloudwatch.Alarm | undefined;
  readonly snsOutage: cloudwatch.Alarm | undefined;
  readonly blockedKeys: cloudwatch.Alarm | undefined;

  constructor(scope: Construct, id: string, props: OutboxAlarmsProps) {
    super(scope, id);
    const minute = Duration.minutes(1);

    this.deadLetters = notEmpty(this, "DeadLetterQueueNotEmpty", props.deadLetterQueue, {
      label: "DLQ messages",
      description: "The consumer's DLQ holds messages: inspect them, fix, then redrive.",
    });
    this.undeliveredBySns = notEmpty(
      this,
      "SubscriptionDeadLetterQueueNotEmpty",
      props.subscriptionDeadLetterQueue,
      {
        label: "undelivered by SNS",
        description:
          "SNS could not deliver events to the consumer's queue (queue policy, encryption, a deleted queue): fix the cause, then move them to the queue.",
      },
    );

    this.deadEvents = new cloudwatch.Alarm(this, "RelayDeadEvents", {
      metric: props.relayDeadEvents,
      alarmDescription:
        "The relay marked an outbox row dead: it will not be published until `relay requeue-dead`, and holds its ordering key until then or `relay skip-dead` (the `event dead` line says why).",
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    this.handlerFailures = new cloudwatch.Alarm(this, "ConsumerHandlerFailures", {
      metric: props.consumerHandlerFailures,
      alarmDescription: `Consumer handlers fail more than ${props.handlerFailuresPerMinute} times a minute: the messages are retried and end in the DLQ if it persists.`,
      threshold: props.handlerFailuresPerMinute,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    this.queueAge = props.queue
      .metricApproximateAgeOfOldestMessage({ period: minute, statistic: "Maximum" })
      .createAlarm(this, "OldestMessageAge", {
        alarmDescription: `The consumer is behind: a message has waited over ${props.oldestMessageAgeThreshold.toHumanString()}.`,
        threshold: props.oldestMessageAgeThreshold.toSeconds(),
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });

    this.relayLag = props.relayLag
      ? new cloudwatch.Alarm(this, "RelayLag", {
          metric: props.relayLag,
          alarmDescription: `The relay is behind: an outbox row has waited over ${props.relayLagThreshold.toHumanString()} to be published (or no relay reports its lag).`,
          threshold: props.relayLagThreshold.toSeconds(),
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 5,
          datapointsToAlarm: 3,
          // The gauge is 0 when nothing is pending, so silence means no relay (or no collector) is running.
          treatMissingData: cloudwatch.TreatMissingData.BREACHING,
        })
      : undefined;

    // Whole-request failures spend no attempts (rows wait, nothing dies), so an outage shows here and
    // in the lag, never as dead rows. Missing data is the lag alarm's business.
    this.snsOutage = props.relayTopicsInOutage
      ? new cloudwatch.Alarm(this, "RelaySnsOutage", {
          metric: props.relayTopicsInOutage,
          alarmDescription: `SNS has failed the relay's PublishBatch requests as a whole for ${SNS_OUTAGE_MINUTES} minutes (5xx, throttling, timeouts, a permission or a deleted topic): events wait, none dies. relay_publish_request_failures_total{kind} and the "PublishBatch failing as a whole" line say why.`,
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: SNS_OUTAGE_MINUTES,
          datapointsToAlarm: SNS_OUTAGE_MINUTES,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        })
      : undefined;

    // A state, where RelayDeadEvents is the event: it stays in alarm until an operator has decided.
    this.blockedKeys = props.relayBlockedKeys
      ? new cloudwatch.Alarm(this, "RelayBlockedKeys", {
          metric: props.relayBlockedKeys,
          alarmDescription:
            "A dead outbox row holds its ordering key: the key's later events wait. `relay status` lists them; `relay requeue-dead` retries the row, `relay skip-dead` lets the key go on without it.",
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        })
      : undefined;

    const action = new actions.SnsAction(props.alarmTopic);
    for (const alarm of [
      this.deadLetters,
      this.undeliveredBySns,
      this.deadEvents,
      this.handlerFailures,
      this.queueAge,
      this.relayLag,
      this.snsOutage,
      this.blockedKeys,
    ]) {
      alarm?.addAlarmAction(action);
      alarm?.addOkAction(action);
    }
  }
}

/** Visible + in flight: a DLQ being redriven or inspected still counts as not empty. */
function notEmpty(
  scope: Construct,
  id: string,
  queue: sqs.IQueue,
  { label, description }: { label: string; description: string },
): cloudwatch.Alarm {
  const minute = Duration.minutes(1);
  return new cloudwatch.MathExpression({
    expression: "visible + notVisible",
    usingMetrics: {
      visible: queue.metricApproximateNumberOfMessagesVisible({ period: minute, statistic: "Maximum" }),
      notVisible: queue.metricApproximateNumberOfMessagesNotVisible({ period: minute, statistic: "Maximum" }),
    },
    period: minute,
    label,
  }).createAlarm(scope, id, {
    alarmDescription: description,
    threshold: 0,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
}
