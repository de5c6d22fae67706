import { Duration, RemovalPolicy, Stack } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as ecs from "aws-cdk-lib/aws-ecs";
import * as iam from "aws-cdk-lib/aws-iam";
import * as logs from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";

/** ADOT collector (AWS Distro for OpenTelemetry) from ECR Public: pulled without registry credentials. */
export const DEFAULT_COLLECTOR_IMAGE = "public.ecr.aws/aws-observability/aws-otel-collector:v0.43.3";

export interface PrometheusEmfSidecarProps {
  readonly taskDefinition: ecs.FargateTaskDefinition;
  /** The daemon's OPS_PORT: the collector scrapes http://127.0.0.1:<port>/metrics (same task, same netns). */
  readonly opsPort: number;
  /** Prometheus metric names to forward; every other series is dropped at scrape time. */
  readonly metricNames: readonly string[];
  /** CloudWatch namespace of the forwarded metrics. */
  readonly namespace: string;
  /** Value of the daemon's `service` label (its registry's default label): the metrics' one dimension. */
  readonly service: string;
  readonly collectorImage?: string;
  readonly logRetention?: logs.RetentionDays;
  readonly scrapeIntervalSeconds?: number;
}

/**
 * Gets selected Prometheus gauges of a daemon into CloudWatch metrics without touching the daemon:
 * an ADOT collector sidecar scrapes /metrics and writes them as Embedded Metric Format log events to
 * a log group of its own; CloudWatch extracts the metrics from those events. EMF through Logs, rather
 * than PutMetricData, because Logs permissions can be scoped to one log group, while
 * cloudwatch:PutMetricData only exists on resource `*`.
 */
export class PrometheusEmfSidecar extends Construct {
  readonly logGroup: logs.LogGroup;
  readonly container: ecs.ContainerDefinition;
  readonly namespace: string;
  readonly service: string;

  constructor(scope: Construct, id: string, props: PrometheusEmfSidecarProps) {
    super(scope, id);
    this.namespace = props.namespace;
    this.service = props.service;
    const stack = Stack.of(this);
    const interval = props.scrapeIntervalSeconds ?? 30;
    this.logGroup = new logs.LogGroup(this, "EmfLogs", {
      retention: props.logRetention ?? logs.RetentionDays.ONE_WEEK,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const keep = props.metricNames.join("|");
    // `$` would be an env expansion in collector config: the regexes avoid it (relabel regexes are anchored).
    const config = [
      "extensions:",
      "  health_check:",
      "    endpoint: 127.0.0.1:13133",
      "receivers:",
      "  prometheus:",
      "    config:",
      "      scrape_configs:",
      `        - job_name: ${props.service}`,
      `          scrape_interval: ${interval}s`,
      "          static_configs:",
      `            - targets: ["127.0.0.1:${props.opsPort}"]`,
      "          metric_relabel_configs:",
      "            - source_labels: [__name__]",
      `              regex: "${keep}"`,
      "              action: keep",
      "processors:",
      "  batch:",
      "    timeout: 10s",
      "exporters:",
      "  awsemf:",
      `    namespace: ${props.namespace}`,
      `    region: ${stack.region}`,
      `    log_group_name: ${this.logGroup.logGroupName}`,
      `    log_stream_name: ${props.service}/{TaskId}`,
      "    dimension_rollup_option: NoDimensionRollup",
      "    metric_declarations:",
      "      - dimensions: [[service]]",
      "        metric_name_selectors:",
      ...props.metricNames.map((name) => `          - "^${name}"`),
      "service:",
      "  extensions: [health_check]",
      "  pipelines:",
      "    metrics:",
      "      receivers: [prometheus]",
      "      processors: [batch]",
      "      exporters: [awsemf]",
      "",
    ].join("\n");

    this.container = props.taskDefinition.addContainer("metrics", {
      containerName: "metrics",
      image: ecs.ContainerImage.fromRegistry(props.collectorImage ?? DEFAULT_COLLECTOR_IMAGE),
      // A broken collector loses the lag metric (its alarm treats missing data as breaching), never the relay.
      essential: false,
      environment: { AOT_CONFIG_CONTENT: config },
      memoryReservationMiB: 64,
      stopTimeout: Duration.seconds(10),
      healthCheck: {
        command: ["CMD", "/healthcheck"],
        interval: Duration.seconds(30),
        timeout: Duration.seconds(5),
        retries: 3,
        startPeriod: Duration.seconds(30),
      },
      logging: ecs.LogDrivers.awsLogs({ logGroup: this.logGroup, streamPrefix: "collector" }),
    });

    // Only this log group: the exporter creates its stream and writes EMF events.
    props.taskDefinition.addToTaskRolePolicy(
      new iam.PolicyStatement({
        actions: ["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
        resources: [this.logGroup.logGroupArn],
      }),
    );
  }

  /** A forwarded gauge as a CloudWatch metric (its one dimension: `service`). */
  metric(name: string, options: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return new cloudwatch.Metric({
      period: Duration.minutes(1),
      statistic: "Maximum",
      ...options,
      metricName: name,
      namespace: this.namespace,
      dimensionsMap: { service: this.service },
    });
  }
}
