import type { Daemon } from "./budget.js";
import { FORWARDED_METRICS, type ForwardedMetric } from "./daemon-metrics.js";
import type { OutboxWorkersStackProps } from "./stack-props.js";
import { DEFAULT_TRACE_SAMPLE_RATIO, tracesEnvironment } from "./telemetry-sidecar.js";

/** What one daemon's collector sidecar does. */
export interface DaemonTelemetry {
  readonly metrics: readonly ForwardedMetric[];
  /** The daemon's OTEL_* variables that send its spans to the sidecar; undefined: no traces. */
  readonly tracesEnvironment: Readonly<Record<string, string>> | undefined;
  readonly collectorImage?: string;
}

/**
 * The daemon's sidecar under the stack's props; undefined: no sidecar. `relay.lagMetric` and
 * `relay.collectorImage` predate `telemetry` and keep their meaning: the relay's metrics, and the
 * collector image (now of every sidecar) when `telemetry.collectorImage` is not set.
 */
export function daemonTelemetry(props: OutboxWorkersStackProps, daemon: Daemon): DaemonTelemetry | undefined {
  const options = props.telemetry ?? {};
  const metricsOn = (options.metrics ?? true) && (daemon !== "relay" || (props.relay?.lagMetric ?? true));
  const tracesOn = options.traces ?? true;
  if (!metricsOn && !tracesOn) return undefined;
  const collectorImage = options.collectorImage ?? props.relay?.collectorImage;
  return {
    metrics: metricsOn ? FORWARDED_METRICS[daemon] : [],
    tracesEnvironment: tracesOn
      ? tracesEnvironment(options.traceSampleRatio ?? DEFAULT_TRACE_SAMPLE_RATIO)
      : undefined,
    ...(collectorImage ? { collectorImage } : {}),
  };
}

/** The daemons the stack deploys: the photo service only with `api`. */
function deployedDaemons(props: OutboxWorkersStackProps): Daemon[] {
  return ["relay", "consumer", ...(props.api ? (["api"] as const) : [])];
}

/** Some task runs a collector sidecar whose image is the public default (ECR Public has no VPC endpoint). */
export function pullsPublicCollector(props: OutboxWorkersStackProps): boolean {
  return deployedDaemons(props).some((daemon) => {
    const telemetry = daemonTelemetry(props, daemon);
    return telemetry !== undefined && telemetry.collectorImage === undefined;
  });
}
