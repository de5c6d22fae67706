import { context, DiagLogLevel, diag, propagation, trace } from "@opentelemetry/api";
import type { Sampler } from "@opentelemetry/sdk-trace-node";
import type { Logger } from "../log/logger.js";
import { type SamplerName, type TracingConfig, tracingConfig } from "./tracing-config.js";

/** The tracing of one daemon process: the SDK when configured, nothing at all otherwise. */
export interface Tracing {
  readonly enabled: boolean;
  /**
   * Exports the spans still buffered and stops, giving up after `timeoutMs`; logs and resolves
   * whether it did. Unregisters the SDK from the API, so later spans cost nothing again.
   */
  shutdown(timeoutMs: number): Promise<boolean>;
}

const tracingOff: Tracing = { enabled: false, shutdown: async () => true };

export interface TracingSettings {
  /** `service.name` unless OTEL_SERVICE_NAME says otherwise. */
  readonly service: string;
  readonly version: string;
  readonly log: Logger;
}

async function samplerFor(name: SamplerName, ratio: number): Promise<Sampler> {
  const { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler } = await import(
    "@opentelemetry/sdk-trace-node"
  );
  switch (name) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return new TraceIdRatioBasedSampler(ratio);
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

/** The exporter reads OTEL_EXPORTER_OTLP_* (endpoint, headers, timeout, compression) itself. */
async function exporterFor(protocol: "http/protobuf" | "http/json") {
  if (protocol === "http/json")
    return new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter();
  return new (await import("@opentelemetry/exporter-trace-otlp-proto")).OTLPTraceExporter();
}

/** The SDK's own complaints (an export that failed, a span dropped) on the daemon's log, as warnings. */
function routeDiagnostics(log: Logger): void {
  const otel = log.child({ component: "opentelemetry" });
  // An Error inside an array would be written as {}: its text is what an operator needs.
  const warn = (message: string, ...args: unknown[]) =>
    otel.warn(
      { details: args.map((arg) => (arg instanceof Error ? `${arg.name}: ${arg.message}` : arg)) },
      message,
    );
  const ignore = () => {};
  diag.setLogger({ error: warn, warn, info: ignore, debug: ignore, verbose: ignore }, DiagLogLevel.WARN);
}

async function register(config: Extract<TracingConfig, { enabled: true }>, settings: TracingSettings) {
  // Loaded only now: a daemon without tracing never loads the SDK.
  const [{ BatchSpanProcessor, NodeTracerProvider }, { W3CTraceContextPropagator }, resources] =
    await Promise.all([
      import("@opentelemetry/sdk-trace-node"),
      import("@opentelemetry/core"),
      import("@opentelemetry/resources"),
    ]);
  routeDiagnostics(settings.log);
  // The daemon names itself; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (envDetector) win.
  const resource = resources
    .resourceFromAttributes({ "service.name": settings.service, "service.version": settings.version })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    sampler: await samplerFor(config.sampler, config.ratio),
    spanProcessors: [new BatchSpanProcessor(await exporterFor(config.protocol), config.batch)],
  });
  // W3C trace context only: `traceparent`/`tracestate` are what the outbox stores and SNS carries.
  // Baggage would be one more of the 8 message attributes left to the caller, and nothing reads it.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return provider;
}

/**
 * Starts the OpenTelemetry SDK if the standard OTEL_* variables ask for traces (see tracingConfig),
 * else nothing: library code then talks to the API's no-op. Reads `process.env`, as the exporter does.
 * Rejects only with tracingConfig's ConfigError (a protocol we do not ship; runDaemon refuses it before
 * this is called): a tracing set-up that fails otherwise is logged and the daemon runs without it.
 */
export async function startTracing(settings: TracingSettings): Promise<Tracing> {
  const { log } = settings;
  const config = tracingConfig(process.env);
  for (const warning of config.warnings) log.warn({ component: "opentelemetry" }, warning);
  if (!config.enabled) return tracingOff;
  let provider: Awaited<ReturnType<typeof register>>;
  try {
    provider = await register(config, settings);
  } catch (error) {
    log.warn({ err: error }, "tracing could not start; running without it");
    return tracingOff;
  }
  log.info({ endpoint: config.endpoint, protocol: config.protocol, sampler: config.sampler }, "tracing on");
  return {
    enabled: true,
    async shutdown(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), timeoutMs);
      });
      try {
        // Shutting the provider down flushes the batch processor, then closes the exporter.
        const outcome = await Promise.race([
          provider.shutdown().then(
            () => "flushed" as const,
            (error: unknown) => error,
          ),
          timedOut,
        ]);
        if (outcome === "flushed") log.info("traces flushed");
        else if (outcome === "timeout") log.warn({ waitedMs: timeoutMs }, "traces not flushed in time");
        else log.warn({ err: outcome }, "flushing traces failed");
        return outcome === "flushed";
      } finally {
        clearTimeout(timer);
        trace.disable();
        propagation.disable();
        context.disable();
        diag.disable();
      }
    },
  };
}
