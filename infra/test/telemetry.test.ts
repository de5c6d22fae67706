import { readFileSync } from "node:fs";
import { API_METRICS } from "@outbox/api";
import { CONSUMER_METRICS } from "@outbox/consumer";
import { RELAY_METRICS } from "@outbox/relay";
import { tracingConfig } from "@outbox/shared";
import type { Template } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { apiBudget, consumerBudget, relayBudget } from "../lib/budget.js";
import { FORWARDED_METRICS } from "../lib/daemon-metrics.js";
import { stackPropsFromContext } from "../lib/stack-context.js";
import { DEFAULT_COLLECTOR_IMAGE, OTLP_HTTP_ENDPOINT } from "../lib/telemetry-sidecar.js";
import { containerBeside, environmentOf, synth } from "./support/synth.js";

const equipmentUrl = "http://equipment.internal:8080";
const withApi = synth({ api: { equipmentUrl } });
const DAEMONS = ["relay", "consumer", "api"] as const;
type DaemonName = (typeof DAEMONS)[number];
const opsPort: Record<DaemonName, number> = {
  relay: relayBudget().opsPort,
  consumer: consumerBudget({ maxTaskCount: 10 }).opsPort,
  api: apiBudget().opsPort,
};
const NAMES = { relay: RELAY_METRICS, consumer: CONSUMER_METRICS, api: API_METRICS };

interface CollectorConfig {
  receivers: Record<string, Record<string, unknown>>;
  exporters: Record<string, Record<string, unknown>>;
  service: { pipelines: Record<string, { receivers: string[]; processors: string[]; exporters: string[] }> };
}

/** A template value as text: the pieces of an Fn::Join joined, any other intrinsic (a Ref, …) as `<token>`. */
function asText(value: unknown): string {
  if (typeof value === "string") return value;
  const join = (value as { "Fn::Join"?: [string, unknown[]] })["Fn::Join"];
  return join ? join[1].map(asText).join(join[0]) : "<token>";
}

/** The daemon's collector configuration, read back from its task definition. */
function collectorConfig(template: Template, daemon: DaemonName): CollectorConfig {
  const content = environmentOf(containerBeside(template, daemon, "collector")).AOT_CONFIG_CONTENT;
  return parse(asText(content)) as CollectorConfig;
}

describe("each daemon's collector sidecar", () => {
  for (const daemon of DAEMONS) {
    const config = collectorConfig(withApi.template, daemon);

    it(`${daemon}: scrapes its /metrics on OPS_PORT and forwards its metrics through EMF`, () => {
      expect(config.service.pipelines.metrics).toEqual({
        receivers: ["prometheus"],
        processors: ["batch"],
        exporters: ["awsemf"],
      });
      const scrape = (
        config.receivers.prometheus as { config: { scrape_configs: Record<string, unknown>[] } }
      ).config.scrape_configs;
      expect(scrape).toEqual([
        expect.objectContaining({
          job_name: daemon,
          static_configs: [{ targets: [`127.0.0.1:${opsPort[daemon]}`] }],
          metric_relabel_configs: [
            {
              source_labels: ["__name__"],
              regex: FORWARDED_METRICS[daemon].map((metric) => metric.name).join("|"),
              action: "keep",
            },
          ],
        }),
      ]);
      expect(config.exporters.awsemf).toMatchObject({
        namespace: "OutboxWorkers",
        region: "<token>",
        dimension_rollup_option: "NoDimensionRollup",
        log_stream_name: `${daemon}/{TaskId}`,
        metric_declarations: FORWARDED_METRICS[daemon].map((metric) => ({
          dimensions: [["service", ...metric.labels]],
          metric_name_selectors: [`^${metric.name}`],
        })),
      });
    });

    it(`${daemon}: receives OTLP/HTTP spans on loopback and exports them to X-Ray`, () => {
      expect(OTLP_HTTP_ENDPOINT).toBe("127.0.0.1:4318");
      expect(config.receivers.otlp).toEqual({ protocols: { http: { endpoint: "127.0.0.1:4318" } } });
      expect(config.exporters.awsxray).toEqual({ region: "<token>" });
      expect(config.service.pipelines.traces).toEqual({
        receivers: ["otlp"],
        processors: ["batch"],
        exporters: ["awsxray"],
      });
    });

    it(`${daemon}: points the daemon's SDK at the sidecar, with the production sampler`, () => {
      const env = environmentOf(containerBeside(withApi.template, daemon, daemon));
      expect(Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith("OTEL_")))).toEqual({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.05",
      });
      // What the daemon makes of them at start-up (packages/shared's tracing-config).
      expect(tracingConfig(env as Record<string, string>)).toMatchObject({
        enabled: true,
        protocol: "http/protobuf",
        endpoint: "http://127.0.0.1:4318/v1/traces",
        sampler: "parentbased_traceidratio",
        ratio: 0.05,
        warnings: [],
      });
    });

    it(`${daemon}: is non-essential, started before the daemon and so stopped after it`, () => {
      const sidecar = containerBeside(withApi.template, daemon, "collector");
      expect(sidecar.Essential).toBe(false);
      expect(sidecar.Image).toBe(DEFAULT_COLLECTOR_IMAGE);
      expect(containerBeside(withApi.template, daemon, daemon).DependsOn).toEqual([
        { ContainerName: "collector", Condition: "START" },
      ]);
    });
  }

  it("forwards every counter and gauge of each daemon's names constant, no histogram", () => {
    for (const daemon of DAEMONS) {
      const source = readFileSync(new URL(`../../apps/${daemon}/src/metrics.ts`, import.meta.url), "utf8");
      const constant = daemon === "api" ? "API_METRICS" : `${daemon.toUpperCase()}_METRICS`;
      const forwarded = new Map(FORWARDED_METRICS[daemon].map((metric) => [metric.name, metric.labels]));
      for (const [key, name] of Object.entries(NAMES[daemon])) {
        // The metric's constructor call in apps/<daemon>/src/metrics.ts: its kind and its labelNames.
        const declaration = new RegExp(
          `new (Counter|Gauge|Histogram)\\(\\{\\s*name: ${constant}\\.${key},(?:(?!new (?:Counter|Gauge|Histogram)\\()[\\s\\S])*?(?:labelNames: \\[([^\\]]*)\\]|registers)`,
        ).exec(source);
        if (!declaration) throw new Error(`${daemon}: no declaration of ${constant}.${key}`);
        const [, kind, labelList] = declaration;
        const labels = [...(labelList ?? "").matchAll(/"([^"]+)"/g)].map((match) => match[1]);
        if (kind === "Histogram") expect(forwarded.has(name), name).toBe(false);
        else expect(forwarded.get(name), name).toEqual(labels);
      }
    }
  });

  it("selects each metric by a prefix no other forwarded name starts with", () => {
    for (const daemon of DAEMONS) {
      const names = FORWARDED_METRICS[daemon].map((metric) => metric.name);
      for (const name of names) {
        expect(names.filter((other) => other.startsWith(name))).toEqual([name]);
      }
    }
  });

  it("keeps the relay's lag gauges under their names, with `service` their one dimension", () => {
    const declarations = (
      collectorConfig(withApi.template, "relay").exporters.awsemf as {
        metric_declarations: { dimensions: string[][]; metric_name_selectors: string[] }[];
      }
    ).metric_declarations;
    for (const name of [
      RELAY_METRICS.lag,
      RELAY_METRICS.unsent,
      RELAY_METRICS.topicsInOutage,
      RELAY_METRICS.blockedKeys,
    ]) {
      expect(declarations).toContainEqual({ dimensions: [["service"]], metric_name_selectors: [`^${name}`] });
    }
  });

  it("writes each daemon's EMF events to a log group of its own", () => {
    const groups = DAEMONS.map((daemon) => {
      const logging = containerBeside(withApi.template, daemon, "collector").LogConfiguration as {
        Options: { "awslogs-group": { Ref: string } };
      };
      expect(collectorConfig(withApi.template, daemon).exporters.awsemf?.log_group_name).toBe("<token>");
      return logging.Options["awslogs-group"].Ref;
    });
    expect(groups).toEqual([
      expect.stringMatching(/^RelayMetricsEmfLogs/),
      expect.stringMatching(/^ConsumerMetricsEmfLogs/),
      expect.stringMatching(/^ApiMetricsEmfLogs/),
    ]);
  });
});

describe("turning telemetry down", () => {
  it("drops the traces pipeline, the X-Ray exporter and the daemons' OTEL_* with traces off; metrics stay", () => {
    const { template } = synth({ api: { equipmentUrl }, telemetry: { traces: false } });
    for (const daemon of DAEMONS) {
      const config = collectorConfig(template, daemon);
      expect(Object.keys(config.service.pipelines)).toEqual(["metrics"]);
      expect(Object.keys(config.receivers)).toEqual(["prometheus"]);
      expect(Object.keys(config.exporters)).toEqual(["awsemf"]);
      const env = environmentOf(containerBeside(template, daemon, daemon));
      expect(Object.keys(env).filter((name) => name.startsWith("OTEL_"))).toEqual([]);
    }
  });

  it("is a context value too: -c traces=false, -c traceSampleRatio=…", () => {
    const props = (values: Record<string, string>) => stackPropsFromContext((key) => values[key]);
    expect(props({ traces: "false" }).telemetry).toEqual({ traces: false });
    expect(props({ traceSampleRatio: "0.2" }).telemetry).toEqual({ traceSampleRatio: 0.2 });
    expect(props({}).telemetry).toBeUndefined();
    expect(() => props({ traceSampleRatio: "5%" })).toThrow(/traceSampleRatio must be a number from 0 to 1/);
    const { template } = synth(props({ traceSampleRatio: "1" }));
    expect(environmentOf(containerBeside(template, "consumer", "consumer")).OTEL_TRACES_SAMPLER_ARG).toBe(
      "1",
    );
    expect(() => synth({ telemetry: { traceSampleRatio: 2 } })).toThrow(
      /traceSampleRatio must be between 0 and 1/,
    );
  });

  it("keeps the relay's traces with relay.lagMetric false, and removes its lag alarm", () => {
    const { template } = synth({ relay: { lagMetric: false } });
    const config = collectorConfig(template, "relay");
    expect(Object.keys(config.service.pipelines)).toEqual(["traces"]);
    expect(
      template.findResources("AWS::CloudWatch::Alarm", { Properties: { MetricName: RELAY_METRICS.lag } }),
    ).toEqual({});
    expect(Object.keys(collectorConfig(template, "consumer").service.pipelines)).toEqual([
      "metrics",
      "traces",
    ]);
  });

  it("runs no sidecar with metrics and traces off", () => {
    const { template } = synth({ api: { equipmentUrl }, telemetry: { metrics: false, traces: false } });
    for (const daemon of DAEMONS) {
      expect(() => containerBeside(template, daemon, "collector")).toThrow(/no container named collector/);
      expect(containerBeside(template, daemon, daemon).DependsOn).toBeUndefined();
    }
  });

  it("refuses an OTLP variable of the daemon's own while the stack sets them", () => {
    expect(() => synth({ consumer: { environment: { OTEL_TRACES_SAMPLER: "always_on" } } })).toThrow(
      /OTEL_TRACES_SAMPLER are derived by the stack/,
    );
    const { template } = synth({
      telemetry: { traces: false },
      consumer: { environment: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel.internal:4318" } },
    });
    expect(environmentOf(containerBeside(template, "consumer", "consumer")).OTEL_EXPORTER_OTLP_ENDPOINT).toBe(
      "http://otel.internal:4318",
    );
  });

  it("never hands the sidecar's endpoint to the one-off tasks, which run without one", () => {
    for (const name of ["migrate", "reconcile"]) {
      const task = Object.values(withApi.template.findResources("AWS::ECS::TaskDefinition")).find(
        (definition) =>
          (definition.Properties.ContainerDefinitions as { Name: string }[]).some(
            (entry) => entry.Name === name,
          ),
      );
      const definitions = task?.Properties.ContainerDefinitions as { Environment?: { Name: string }[] }[];
      const names = definitions.flatMap((entry) =>
        (entry.Environment ?? []).map((variable) => variable.Name),
      );
      expect(names.filter((variable) => variable.startsWith("OTEL_"))).toEqual([]);
    }
  });
});
