import { Duration } from "aws-cdk-lib";
import * as appscaling from "aws-cdk-lib/aws-applicationautoscaling";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import type * as ecs from "aws-cdk-lib/aws-ecs";
import type * as sqs from "aws-cdk-lib/aws-sqs";

export interface ConsumerScalingProps {
  readonly minTaskCount: number;
  readonly maxTaskCount: number;
  /** CONSUMER_CONCURRENCY: the messages one task handles at once; the steps are multiples of it. */
  readonly concurrency: number;
  /** The queue's lease: a message older than twice it has waited through a whole lease unreceived. */
  readonly visibilityTimeoutSeconds: number;
}

/**
 * Scales the consumer out on the backlog (visible messages) and on its age, and in only once nothing
 * is waiting and nothing is held. Scale-in is slow and one task at a time: every stopped task
 * releases what it holds (a receive each, see budget.ts), so the consumer does not flap.
 */
export function scaleConsumerOnQueue(
  service: ecs.FargateService,
  queue: sqs.IQueue,
  props: ConsumerScalingProps,
): void {
  const minute = Duration.minutes(1);
  const visible = queue.metricApproximateNumberOfMessagesVisible({ period: minute, statistic: "Maximum" });
  const scaling = service.autoScaleTaskCount({
    minCapacity: props.minTaskCount,
    maxCapacity: props.maxTaskCount,
  });
  scaling.scaleOnMetric("Backlog", {
    metric: visible,
    adjustmentType: appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
    scalingSteps: [
      { upper: props.concurrency * 10, change: 0 },
      { lower: props.concurrency * 10, change: +1 },
      { lower: props.concurrency * 100, change: +3 },
    ],
    cooldown: Duration.minutes(5),
    evaluationPeriods: 3,
  });
  // An empty backlog is not an idle consumer: the messages in flight (not visible) are held by the
  // tasks, and a task stopped while it holds them spends their receives and their handlers' time.
  scaling.scaleOnMetric("Idle", {
    metric: new cloudwatch.MathExpression({
      expression: "visible + inFlight",
      usingMetrics: {
        visible,
        inFlight: queue.metricApproximateNumberOfMessagesNotVisible({ period: minute, statistic: "Maximum" }),
      },
      period: minute,
      label: "messages waiting or held",
    }),
    adjustmentType: appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
    scalingSteps: [
      { upper: 0, change: -1 },
      { lower: 1, change: 0 },
    ],
    cooldown: Duration.minutes(5),
    evaluationPeriods: 3,
  });
  const scaleOutAge = Duration.seconds(Math.max(60, props.visibilityTimeoutSeconds * 2));
  scaling.scaleOnMetric("BacklogAge", {
    metric: queue.metricApproximateAgeOfOldestMessage({ period: minute, statistic: "Maximum" }),
    adjustmentType: appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
    scalingSteps: [
      { upper: scaleOutAge.toSeconds(), change: 0 },
      { lower: scaleOutAge.toSeconds(), change: +1 },
    ],
    cooldown: Duration.minutes(3),
    evaluationPeriods: 3,
  });
}
