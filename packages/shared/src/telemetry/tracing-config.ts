/**
 * Whether and how a daemon exports traces, from the standard OTEL_* variables. Pure: reads only the
 * environment it is given, so the decision can be tested without starting anything.
 *
 * Tracing is off unless configured: an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER=otlp turns it on; OTEL_SDK_DISABLED=true
 * and OTEL_TRACES_EXPORTER=none keep it off whatever else is set. The SDK's default of exporting to
 * localhost:4318 unasked would have every unconfigured daemon retrying a collector that is not there.
 */

import { ConfigError, type ConfigProblem } from "../config/config-error.js";

/**
 * The OTLP transports the daemons ship. gRPC would add @grpc/grpc-js (and its native-free but large
 * HTTP/2 stack) for no gain: every collector takes OTLP/HTTP on 4318 beside gRPC on 4317. Asking for
 * it is refused at start-up (exit 78), not let through as a daemon that exports nothing.
 */
const OTLP_PROTOCOLS = ["http/protobuf", "http/json"] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** OTEL_TRACES_SAMPLER's standard values. */
export const SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/** OTEL_BSP_*: the batch span processor's knobs; undefined keeps the SDK's default. */
export interface BatchSettings {
  readonly scheduledDelayMillis?: number;
  readonly exportTimeoutMillis?: number;
  readonly maxQueueSize?: number;
  readonly maxExportBatchSize?: number;
}

export type TracingConfig =
  | {
      readonly enabled: false;
      /** Why tracing is off, for a person asking. */
      readonly reason: string;
      /** Variables that were set but could not be honoured: worth a warning line. */
      readonly warnings: readonly string[];
    }
  | {
      readonly enabled: true;
      readonly protocol: OtlpProtocol;
      /** Where spans go, resolved as the exporter resolves it (for the start-up line only). */
      readonly endpoint: string;
      readonly sampler: SamplerName;
      /** OTEL_TRACES_SAMPLER_ARG, for the ratio samplers. */
      readonly ratio: number;
      readonly batch: BatchSettings;
      readonly warnings: readonly string[];
    };

type Env = Readonly<Record<string, string | undefined>>;

/** A variable's value, with blank treated as unset (as the SDK does). */
function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

/** The spec's default endpoint, and the `/v1/traces` the exporter appends to the generic one. */
function tracesEndpoint(env: Env): string {
  const specific = read(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  if (specific !== undefined) return specific;
  const base = read(env, "OTEL_EXPORTER_OTLP_ENDPOINT") ?? "http://localhost:4318";
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}

function samplerOf(env: Env, warnings: string[]): { sampler: SamplerName; ratio: number } {
  const name = read(env, "OTEL_TRACES_SAMPLER")?.toLowerCase() ?? "parentbased_always_on";
  const known = (SAMPLERS as readonly string[]).includes(name);
  if (!known) warnings.push(`OTEL_TRACES_SAMPLER "${name}" is not supported; using parentbased_always_on`);
  const sampler = known ? (name as SamplerName) : "parentbased_always_on";
  const arg = read(env, "OTEL_TRACES_SAMPLER_ARG");
  if (arg === undefined || !sampler.endsWith("traceidratio")) return { sampler, ratio: 1 };
  const ratio = Number(arg);
  if (Number.isFinite(ratio) && ratio >= 0 && ratio <= 1) return { sampler, ratio };
  warnings.push(`OTEL_TRACES_SAMPLER_ARG "${arg}" is not a ratio between 0 and 1; using 1`);
  return { sampler, ratio: 1 };
}

function batchOf(env: Env, warnings: string[]): BatchSettings {
  const count = (name: string): number | undefined => {
    const text = read(env, name);
    if (text === undefined) return undefined;
    const value = Number(text);
    if (Number.isInteger(value) && value >= 0) return value;
    warnings.push(`${name} "${text}" is not a whole number; using the SDK's default`);
    return undefined;
  };
  return {
    scheduledDelayMillis: count("OTEL_BSP_SCHEDULE_DELAY"),
    exportTimeoutMillis: count("OTEL_BSP_EXPORT_TIMEOUT"),
    maxQueueSize: count("OTEL_BSP_MAX_QUEUE_SIZE"),
    maxExportBatchSize: count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"),
  };
}

/**
 * The traces' protocol: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else the
 * spec's default. A protocol we do not ship is a ConfigError naming the variable that asked for it.
 */
function protocolOf(env: Env): OtlpProtocol {
  const variable = ["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"].find(
    (name) => read(env, name) !== undefined,
  );
  const protocol = variable === undefined ? "http/protobuf" : (read(env, variable) as string);
  const supported = OTLP_PROTOCOLS.find((known) => known === protocol);
  if (supported !== undefined) return supported;
  throw new ConfigError([
    {
      env: variable ?? "OTEL_EXPORTER_OTLP_PROTOCOL",
      message: `OTLP protocol ${JSON.stringify(protocol)} is not supported for traces: use ${OTLP_PROTOCOLS.join(" or ")} (a collector takes OTLP/HTTP on port 4318)`,
    },
  ]);
}

/**
 * Tracing's set-up as the OTEL_* variables ask for it. Throws a ConfigError when they ask for traces
 * over a protocol we do not ship: tracing silently off would look like a working set-up.
 */
export function tracingConfig(env: Env): TracingConfig {
  const warnings: string[] = [];
  if (read(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") {
    return { enabled: false, reason: "OTEL_SDK_DISABLED is true", warnings };
  }
  const exporters = (read(env, "OTEL_TRACES_EXPORTER") ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "");
  if (exporters.length === 0) {
    const endpointSet =
      read(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") !== undefined ||
      read(env, "OTEL_EXPORTER_OTLP_ENDPOINT") !== undefined;
    if (!endpointSet)
      return { enabled: false, reason: "no OTLP endpoint or OTEL_TRACES_EXPORTER set", warnings };
  } else if (!exporters.includes("otlp")) {
    if (exporters.some((name) => name !== "none")) {
      warnings.push(`OTEL_TRACES_EXPORTER "${exporters.join(",")}": only otlp (or none) is supported`);
    }
    return { enabled: false, reason: `OTEL_TRACES_EXPORTER is ${exporters.join(",")}`, warnings };
  } else if (exporters.length > 1) {
    warnings.push(`OTEL_TRACES_EXPORTER "${exporters.join(",")}": only otlp is used`);
  }

  const protocol = protocolOf(env);
  return {
    enabled: true,
    protocol,
    endpoint: tracesEndpoint(env),
    ...samplerOf(env, warnings),
    batch: batchOf(env, warnings),
    warnings,
  };
}

/** What tracingConfig refuses, as problems to report with every other one at start-up (exit 78). */
export function tracingConfigProblems(env: Env): readonly ConfigProblem[] {
  try {
    tracingConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}
