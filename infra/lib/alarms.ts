import { Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as actions from "aws-cdk-lib/aws-cloudwatch-actions";
import type * as sns from "aws-cdk-lib/aws-sns";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";

export interface OutboxAlarmsProps {
  readonly queue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  /** The relay's lag (relay_oldest_unsent_age_seconds in CloudWatch), when a metric path exists. */
  readonly relayLag?: cloudwatch.IMetric;
  /** Alarm when the queue's oldest message is older than this. */
  readonly oldestMessageAgeThreshold: Duration;
  /** Alarm when the oldest unsent outbox row is older than this. */
  readonly relayLagThreshold: Duration;
  /** Where alarms (and their recovery) are sent. */
  readonly alarmTopic?: sns.ITopic;
}

/**
 * The three signals an operator needs: something reached the DLQ (a poison message, or a handler
 * that failed every attempt), the consumer falls behind (oldest message age), the relay falls behind
 * (oldest unsent outbox row).
 */
export class OutboxAlarms extends Construct {
  readonly deadLetters: cloudwatch.Alarm;
  readonly queueAge: cloudwatch.Alarm;
  readonly relayLag: cloudwatch.Alarm | undefined;

  constructor(scope: Construct, id: string, props: OutboxAlarmsProps) {
    super(scope, id);
    const minute = Duration.minutes(1);

    // Visible + in flight: a DLQ being redriven or inspected still counts as not empty.
    const dlqMessages = new cloudwatch.MathExpression({
      expression: "visible + notVisible",
      usingMetrics: {
        visible: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: minute,
          statistic: "Maximum",
        }),
        notVisible: props.deadLetterQueue.metricApproximateNumberOfMessagesNotVisible({
          period: minute,
          statistic: "Maximum",
        }),
      },
      period: minute,
      label: "DLQ messages",
    });
    this.deadLetters = dlqMessages.createAlarm(this, "DeadLetterQueueNotEmpty", {
      alarmDescription: "The consumer's DLQ holds messages: inspect them, fix, then redrive.",
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
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

    if (props.alarmTopic) {
      const action = new actions.SnsAction(props.alarmTopic);
      for (const alarm of [this.deadLetters, this.queueAge, this.relayLag]) {
        alarm?.addAlarmAction(action);
        alarm?.addOkAction(action);
      }
    }
  }
}
