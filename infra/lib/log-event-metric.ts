import { Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as logs from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";

/**
 * The `msg` of the log lines the alarms count (pino JSON, one line per occurrence). Kept next to the
 * filters that match them; infra/test/alarms.test.ts checks that the daemons still log them.
 */
export const LOGGED = {
  /** runDaemon's last report of a stop, with the worker's `clean` flag (packages/shared). */
  drained: "drained",
  /** The relay marked an outbox row dead: it will not be published without `relay requeue-dead`. */
  eventDead: "event dead",
  /** A consumer handler threw: the message goes back to the queue for a later attempt. */
  messageFailed: "message failed; retrying later",
} as const;

export interface LogEventMetricProps {
  readonly logGroup: logs.ILogGroup;
  /** Which lines count: a JSON pattern on pino's fields. */
  readonly pattern: logs.IFilterPattern;
  readonly namespace: string;
  readonly metricName: string;
  /** The daemon's `service` field, which becomes the metric's one dimension. */
  readonly service: string;
}

/**
 * Counts one kind of log line as a CloudWatch metric. For events rather than states: every
 * occurrence is a line, so CloudWatch counts each exactly, including the first one in a task that
 * just started, which a Prometheus counter forwarded as deltas would not report.
 */
export class LogEventMetric extends Construct {
  readonly filter: logs.MetricFilter;
  readonly namespace: string;
  readonly metricName: string;
  readonly service: string;

  constructor(scope: Construct, id: string, props: LogEventMetricProps) {
    super(scope, id);
    this.namespace = props.namespace;
    this.metricName = props.metricName;
    this.service = props.service;
    this.filter = new logs.MetricFilter(this, "Filter", {
      logGroup: props.logGroup,
      filterPattern: props.pattern,
      metricNamespace: props.namespace,
      metricName: props.metricName,
      metricValue: "1",
      // The same `service` dimension as the metrics the collector sidecar forwards.
      dimensions: { service: "$.service" },
    });
  }

  /** Lines per minute (no line in a minute is no data, not zero). */
  metric(): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.namespace,
      metricName: this.metricName,
      dimensionsMap: { service: this.service },
      statistic: "Sum",
      period: Duration.minutes(1),
    });
  }
}

/** `{ $.msg = "<msg>" }`, and more conditions on the same line. */
export function loggedAs(msg: string, ...more: logs.JsonPattern[]): logs.IFilterPattern {
  return logs.FilterPattern.all(logs.FilterPattern.stringValue("$.msg", "=", msg), ...more);
}
