import { Duration, RemovalPolicy, Stack } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as ecs from "aws-cdk-lib/aws-ecs";
import * as iam from "aws-cdk-lib/aws-iam";
import * as logs from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import type { ForwardedMetric } from "./daemon-metrics.js";

/** ADOT collector (AWS Distro for OpenTelemetry) from ECR Public: pulled without registry credentials. */
export const DEFAULT_COLLECTOR_IMAGE = "public.ecr.aws/aws-observability/aws-otel-collector:v0.43.3";

/** Where the collector takes OTLP/HTTP spans: loopback, so only the containers of its own task reach it. */
export const OTLP_HTTP_ENDPOINT = "127.0.0.1:4318";

/** The share of new traces kept when the stack does not say: see `tracesEnvironment`. */
export const DEFAULT_TRACE_SAMPLE_RATIO = 0.05;

/**
 * The daemon's side of the traces pipeline: its SDK exports to the sidecar (which turns tracing on,
 * docs/architecture.md "Tracing"). Parent-based with a ratio at the root: a trace the api starts is
 * kept with probability `sampleRatio`, and the relay and the consumer follow the decision carried in
 * the event's `traceparent`, so a kept trace is whole. X-Ray bills per trace recorded; always-on
 * would record every request and every event.
 */
export function tracesEnvironment(sampleRatio: number): Record<string, string> {
  if (!(sampleRatio >= 0 && sampleRatio <= 1)) {
    throw new Error(`traceSampleRatio must be between 0 and 1, got ${sampleRatio}`);
  }
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://${OTLP_HTTP_ENDPOINT}`,
    OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
    OTEL_TRACES_SAMPLER_ARG: String(sampleRatio),
  };
}

export interface TelemetrySidecarProps {
  readonly taskDefinition: ecs.FargateTaskDefinition;
  /** The daemon's container: it starts after the collector and stops before it. */
  readonly daemonContainer: ecs.ContainerDefinition;
  /** The daemon's OPS_PORT: the collector scrapes http://127.0.0.1:<port>/metrics (same task, same netns). */
  readonly opsPort: number;
  /** The Prometheus metrics to forward (every other series is dropped at scrape time); empty: none. */
  readonly metrics: readonly ForwardedMetric[];
  /** Receive the daemon's spans on OTLP_HTTP_ENDPOINT and send them to X-Ray. */
  readonly traces: boolean;
  /** CloudWatch namespace of the forwarded metrics. */
  readonly namespace: string;
  /** Value of the daemon's `service` label (its registry's default label): every metric's first dimension. */
  readonly service: string;
  readonly collectorImage?: string;
  readonly logRetention?: logs.RetentionDays;
  readonly scrapeIntervalSeconds?: number;
}

/**
 * A daemon's metrics and traces out of its task without touching the daemon: an ADOT collector
 * sidecar (1) scrapes /metrics and writes the chosen series as Embedded Metric Format log events to
 * a log group of its own, from which CloudWatch extracts the metrics, and (2) receives the daemon's
 * OTLP spans and sends them to X-Ray. EMF through Logs, rather than PutMetricData, because Logs
 * permissions can be scoped to one log group, while cloudwatch:PutMetricData only exists on
 * resource `*`.
 */
export class TelemetrySidecar extends Construct {
  /** The EMF events, and the collector's own log. */
  readonly logGroup: logs.LogGroup;
  readonly container: ecs.ContainerDefinition;
  readonly namespace: string;
  readonly service: string;
  /** The collector's configuration (AOT_CONFIG_CONTENT), as an object. */
  readonly config: Readonly<Record<string, unknown>>;

  constructor(scope: Construct, id: string, props: TelemetrySidecarProps) {
    super(scope, id);
    if (props.metrics.length === 0 && !props.traces) {
      throw new Error(`${props.service}: a telemetry sidecar with neither metrics nor traces has no job`);
    }
    this.namespace = props.namespace;
    this.service = props.service;
    this.logGroup = new logs.LogGroup(this, "EmfLogs", {
      retention: props.logRetention ?? logs.RetentionDays.ONE_WEEK,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.config = collectorConfig(props, Stack.of(this).region, this.logGroup.logGroupName);

    this.container = props.taskDefinition.addContainer("collector", {
      containerName: "collector",
      image: ecs.ContainerImage.fromRegistry(props.collectorImage ?? DEFAULT_COLLECTOR_IMAGE),
      // A broken collector loses metrics (the lag alarm treats missing data as breaching) and spans, never the daemon.
      essential: false,
      // JSON is YAML: the collector reads this as its configuration file.
      environment: { AOT_CONFIG_CONTENT: JSON.stringify(this.config, null, 2) },
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
    // ECS stops containers in the reverse order of their dependencies: the collector outlives the
    // daemon's drain, so the spans the daemon flushes at its stop and the last scrape still leave.
    props.daemonContainer.addContainerDependencies({
      container: this.container,
      condition: ecs.ContainerDependencyCondition.START,
    });

    if (props.metrics.length > 0) {
      // Only this log group: the exporter creates its stream and writes EMF events.
      props.taskDefinition.addToTaskRolePolicy(
        new iam.PolicyStatement({
          actions: ["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"],
          resources: [this.logGroup.logGroupArn],
        }),
      );
    }
    if (props.traces) {
      // X-Ray's PutTraceSegments and PutTelemetryRecords have no resource-level permissions: `*`
      // is the only resource they accept (the one wildcard the IAM tests allow besides ECR's token).
      props.taskDefinition.addToTaskRolePolicy(
        new iam.PolicyStatement({
          actions: ["xray:PutTraceSegments", "xray:PutTelemetryRecords"],
          resources: ["*"],
        }),
      );
    }
  }

  /** A forwarded label-less metric as a CloudWatch metric (its one dimension: `service`). */
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

/** The pipelines asked for: metrics (prometheus → awsemf) and traces (otlp → awsxray). */
function collectorConfig(
  props: TelemetrySidecarProps,
  region: string,
  logGroupName: string,
): Record<string, unknown> {
  const forwarding = props.metrics.length > 0;
  const interval = props.scrapeIntervalSeconds ?? 30;
  // `$` would be an env expansion in collector config: the regexes avoid it (relabel regexes are
  // anchored; the selectors are prefixes, and no forwarded name is the prefix of another).
  const receivers = {
    ...(forwarding
      ? {
          prometheus: {
            config: {
              scrape_configs: [
                {
                  job_name: props.service,
                  scrape_interval: `${interval}s`,
                  static_configs: [{ targets: [`127.0.0.1:${props.opsPort}`] }],
                  metric_relabel_configs: [
                    {
                      source_labels: ["__name__"],
                      regex: props.metrics.map((metric) => metric.name).join("|"),
                      action: "keep",
                    },
                  ],
                },
              ],
            },
          },
        }
      : {}),
    ...(props.traces ? { otlp: { protocols: { http: { endpoint: OTLP_HTTP_ENDPOINT } } } } : {}),
  };
  const exporters = {
    ...(forwarding
      ? {
          awsemf: {
            namespace: props.namespace,
            region,
            log_group_name: logGroupName,
            log_stream_name: `${props.service}/{TaskId}`,
            dimension_rollup_option: "NoDimensionRollup",
            // One declaration per metric: its own labels are its dimensions, after `service`.
            metric_declarations: props.metrics.map((metric) => ({
              dimensions: [["service", ...metric.labels]],
              metric_name_selectors: [`^${metric.name}`],
            })),
          },
        }
      : {}),
    ...(props.traces ? { awsxray: { region } } : {}),
  };
  return {
    extensions: { health_check: { endpoint: "127.0.0.1:13133" } },
    receivers,
    processors: { batch: { timeout: "10s" } },
    exporters,
    service: {
      extensions: ["health_check"],
      pipelines: {
        ...(forwarding
          ? { metrics: { receivers: ["prometheus"], processors: ["batch"], exporters: ["awsemf"] } }
          : {}),
        ...(props.traces
          ? { traces: { receivers: ["otlp"], processors: ["batch"], exporters: ["awsxray"] } }
          : {}),
      },
    },
  };
}
