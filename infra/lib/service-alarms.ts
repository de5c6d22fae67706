import { Duration, Stack } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as actions from "aws-cdk-lib/aws-cloudwatch-actions";
import * as events from "aws-cdk-lib/aws-events";
import * as targets from "aws-cdk-lib/aws-events-targets";
import * as logs from "aws-cdk-lib/aws-logs";
import type * as sns from "aws-cdk-lib/aws-sns";
import { Construct } from "constructs";
import type { DaemonService } from "./daemon-service.js";
import { LOGGED, LogEventMetric, loggedAs } from "./log-event-metric.js";

/** SIGKILL: 128 + 9. ECS reports it when stopTimeout ran out, on OOM, or on a kill by the platform. */
export const SIGKILL_EXIT_CODE = 137;

export interface ServiceAlarmsProps {
  readonly daemon: DaemonService;
  /** Namespace of the log-derived metrics (the daemons' own metrics live there too). */
  readonly namespace: string;
  readonly alarmTopic: sns.ITopic;
}

/** Minutes in a row a service may run fewer tasks than it wants: a start or a replacement fits in. */
const BELOW_DESIRED_MINUTES = 5;

/**
 * What every daemon service promises, each as an alarm: a stop ends in a clean drain, no task is
 * SIGKILLed, and the service runs as many tasks as it wants.
 */
export class ServiceAlarms extends Construct {
  readonly uncleanDrains: cloudwatch.Alarm;
  /** Matches the service's stopped tasks with a container that exited 137; notifies the topic itself. */
  readonly killedTaskRule: events.Rule;
  readonly tasksKilled: cloudwatch.Alarm;
  readonly belowDesired: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: ServiceAlarmsProps) {
    super(scope, id);
    const { daemon, alarmTopic } = props;
    const service = daemon.container.containerName;
    const minute = Duration.minutes(1);

    // The drain summary is a log line only (runDaemon's `drained`, with the worker's `clean`).
    const uncleanDrains = new LogEventMetric(this, "UncleanDrainLines", {
      logGroup: daemon.logGroup,
      pattern: loggedAs(LOGGED.drained, logs.FilterPattern.booleanValue("$.clean", false)),
      namespace: props.namespace,
      metricName: "unclean_drains",
      service,
    });
    this.uncleanDrains = uncleanDrains.metric().createAlarm(this, "UncleanDrain", {
      alarmDescription: `A ${service} task stopped with work left undone (drained with clean=false): read its drained line.`,
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    // A SIGKILL leaves no log line: the task's state change says it. Any revision of the family
    // (a deployment stops the old one's tasks) and any container of the task, the sidecar included:
    // EventBridge cannot tie the exit code to one element of the `containers` array.
    const stack = Stack.of(this);
    const family = daemon.taskDefinition.family;
    this.killedTaskRule = new events.Rule(this, "KilledTask", {
      description: `A ${service} task stopped with a container killed (exit ${SIGKILL_EXIT_CODE})`,
      eventPattern: {
        source: ["aws.ecs"],
        detailType: ["ECS Task State Change"],
        detail: {
          lastStatus: ["STOPPED"],
          taskDefinitionArn: events.Match.prefix(
            `arn:${stack.partition}:ecs:${stack.region}:${stack.account}:task-definition/${family}:`,
          ),
          containers: { exitCode: [SIGKILL_EXIT_CODE] },
        },
      },
    });
    // The event itself says which task and why (stoppedReason); the alarm below gives it a state.
    this.killedTaskRule.addTarget(
      new targets.SnsTopic(alarmTopic, {
        message: events.RuleTargetInput.fromText(
          `${service}: task ${events.EventField.fromPath("$.detail.taskArn")} was killed ` +
            `(exit ${SIGKILL_EXIT_CODE}); stopped reason: ${events.EventField.fromPath("$.detail.stoppedReason")}`,
        ),
      }),
    );
    this.tasksKilled = new cloudwatch.Metric({
      namespace: "AWS/Events",
      metricName: "TriggeredRules",
      dimensionsMap: { RuleName: this.killedTaskRule.ruleName },
      statistic: "Sum",
      period: minute,
    }).createAlarm(this, "TaskKilled", {
      alarmDescription: `A ${service} task was SIGKILLed (exit ${SIGKILL_EXIT_CODE}): its stop ran past stopTimeout, or it ran out of memory.`,
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    // Container Insights (enabled on the cluster). Per minute the most lenient view: a minute in
    // which the service got back to its count is not a shortfall. Deployments start tasks before
    // stopping any (minHealthyPercent 100), and a scale-out starts its tasks within the window.
    const insights = (metricName: string, statistic: string) =>
      new cloudwatch.Metric({
        namespace: "ECS/ContainerInsights",
        metricName,
        dimensionsMap: {
          ClusterName: daemon.service.cluster.clusterName,
          ServiceName: daemon.service.serviceName,
        },
        statistic,
        period: minute,
      });
    this.belowDesired = new cloudwatch.MathExpression({
      expression: "desired - running",
      usingMetrics: {
        desired: insights("DesiredTaskCount", "Minimum"),
        running: insights("RunningTaskCount", "Maximum"),
      },
      period: minute,
      label: `${service} tasks missing`,
    }).createAlarm(this, "RunningBelowDesired", {
      alarmDescription: `The ${service} service has run fewer tasks than desired for ${BELOW_DESIRED_MINUTES} minutes: tasks fail to start or keep stopping.`,
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: BELOW_DESIRED_MINUTES,
      datapointsToAlarm: BELOW_DESIRED_MINUTES,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    const action = new actions.SnsAction(alarmTopic);
    for (const alarm of [this.uncleanDrains, this.tasksKilled, this.belowDesired]) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }
}
