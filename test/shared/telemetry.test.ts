import { context, propagation, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { enqueue, type NewEvent, OutboxValidationError, uuidv7 } from "@outbox/client";
import { MAX_MESSAGE_BYTES } from "@outbox/client/internal";
import {
  ConfigError,
  type DatabaseHandle,
  startTracing,
  tracingConfig,
  tracingConfigProblems,
} from "@outbox/shared";
import { capturingLogger, createMigratedTestDatabase } from "@outbox/test-kit";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";

let handle: DatabaseHandle;
beforeAll(async () => {
  ({ handle } = await createMigratedTestDatabase("shared_telemetry", { service: "shared-test", poolMax: 2 }));
});
afterAll(async () => {
  await handle.close(5_000);
});

async function storedHeaders(id: string): Promise<Record<string, string>> {
  const row = await handle.db
    .selectFrom("outbox")
    .select("headers")
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  return row.headers;
}

const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

describe("tracingConfig: off unless the OTEL_* variables ask for traces", () => {
  const endpoint = "http://collector:4318";

  it.each([
    [{}, "no OTLP endpoint or OTEL_TRACES_EXPORTER set"],
    [{ OTEL_SERVICE_NAME: "relay", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }, "no OTLP endpoint"],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "  " }, "no OTLP endpoint"],
    [{ OTEL_SDK_DISABLED: "TRUE", OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, "OTEL_SDK_DISABLED is true"],
    [{ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, "OTEL_TRACES_EXPORTER is none"],
  ])("%j → off (%s)", (env, reason) => {
    const config = tracingConfig(env);
    expect(config.enabled).toBe(false);
    expect(config.enabled ? "" : config.reason).toContain(reason);
    expect(config.warnings).toEqual([]);
  });

  it("an endpoint turns it on, with the spec's defaults: http/protobuf, parent-based always-on", () => {
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: `${endpoint}/` })).toEqual({
      enabled: true,
      protocol: "http/protobuf",
      endpoint: `${endpoint}/v1/traces`,
      sampler: "parentbased_always_on",
      ratio: 1,
      batch: {},
      warnings: [],
    });
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/custom/path" })).toMatchObject({
      enabled: true,
      endpoint: "http://c:4318/custom/path",
    });
    expect(tracingConfig({ OTEL_TRACES_EXPORTER: "otlp" })).toMatchObject({
      enabled: true,
      endpoint: "http://localhost:4318/v1/traces",
    });
  });

  it("reads the protocol, the sampler and the batch processor's variables", () => {
    const config = tracingConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
      OTEL_BSP_SCHEDULE_DELAY: "200",
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "64",
    });
    expect(config).toMatchObject({
      enabled: true,
      protocol: "http/json",
      sampler: "parentbased_traceidratio",
      ratio: 0.25,
      batch: { scheduledDelayMillis: 200, maxExportBatchSize: 64 },
      warnings: [],
    });
  });

  it("refuses a protocol it does not ship, naming the variable that asked for it; only when traces are asked for", () => {
    const refused = (env: Record<string, string>) => {
      try {
        tracingConfig(env);
      } catch (error) {
        return error instanceof ConfigError ? error.problems : error;
      }
      return "accepted";
    };
    expect(refused({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toEqual([
      {
        env: "OTEL_EXPORTER_OTLP_PROTOCOL",
        message:
          'OTLP protocol "grpc" is not supported for traces: use http/protobuf or http/json (a collector takes OTLP/HTTP on port 4318)',
      },
    ]);
    // The traces' own variable wins over the generic one, both ways.
    expect(
      refused({
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc",
      }),
    ).toMatchObject([{ env: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" }]);
    expect(
      refused({
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      }),
    ).toBe("accepted");
    // Tracing off anyway: nothing to refuse.
    expect(refused({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toBe("accepted");
    expect(
      tracingConfigProblems({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }),
    ).toHaveLength(1);
  });

  it("warns about what it cannot honour: other exporters stay off, bad values fall back", () => {
    expect(tracingConfig({ OTEL_TRACES_EXPORTER: "console" })).toMatchObject({
      enabled: false,
      warnings: ['OTEL_TRACES_EXPORTER "console": only otlp (or none) is supported'],
    });
    expect(
      tracingConfig({
        OTEL_TRACES_EXPORTER: "otlp,zipkin",
        OTEL_TRACES_SAMPLER: "sometimes",
        OTEL_BSP_SCHEDULE_DELAY: "soon",
      }),
    ).toMatchObject({
      enabled: true,
      sampler: "parentbased_always_on",
      batch: { scheduledDelayMillis: undefined },
      warnings: [
        'OTEL_TRACES_EXPORTER "otlp,zipkin": only otlp is used',
        'OTEL_TRACES_SAMPLER "sometimes" is not supported; using parentbased_always_on',
        'OTEL_BSP_SCHEDULE_DELAY "soon" is not a whole number; using the SDK\'s default',
      ],
    });
  });
});

describe("with no OTEL_* variables: no SDK, and enqueue and the logs as without tracing", () => {
  beforeEach(() => {
    for (const name of Object.keys(process.env).filter((key) => key.startsWith("OTEL_"))) {
      vi.stubEnv(name, undefined);
    }
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("startTracing starts nothing and logs nothing; spans are the API's non-recording no-ops", async () => {
    const { lines, log } = capturingLogger();
    const tracing = await startTracing({ service: "relay", version: "1.2.3", log });
    expect(tracing.enabled).toBe(false);
    expect(await tracing.shutdown(100)).toBe(true);
    expect(lines).toEqual([]);
    const span = trace.getTracer("test").startSpan("anything");
    expect(span.isRecording()).toBe(false);
    expect(trace.getSpanContext(trace.setSpan(context.active(), span))?.traceId).toBe("0".repeat(32));
  });

  it("enqueue stores the caller's headers as given, a caller's traceparent included", async () => {
    const callers = `00-${"a".repeat(32)}-${"b".repeat(16)}-01`;
    const [plain, withParent] = await enqueue(handle.db, [
      { topic: "orders", eventType: "order.placed", payload: { n: 1 } },
      { topic: "orders", eventType: "order.placed", payload: { n: 2 }, headers: { traceparent: callers } },
    ]);
    expect(await storedHeaders(plain ?? "")).toEqual({});
    expect(await storedHeaders(withParent ?? "")).toEqual({ traceparent: callers });
  });

  it("log lines carry no trace_id or span_id, even inside a span", () => {
    const { lines, log } = capturingLogger();
    trace.getTracer("test").startActiveSpan("request", (span) => {
      log.info("inside");
      span.end();
    });
    expect(lines[0]).toMatchObject({ msg: "inside" });
    expect(lines[0]).not.toHaveProperty("trace_id");
    expect(lines[0]).not.toHaveProperty("span_id");
  });
});

describe("with an SDK registered", () => {
  // Both made per test: the provider's shutdown shuts its exporter down for good.
  let exporter: InMemorySpanExporter;
  let provider: NodeTracerProvider;
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register({ propagator: new W3CTraceContextPropagator() });
  });
  afterEach(async () => {
    await provider.shutdown();
    trace.disable();
    propagation.disable();
    context.disable();
  });

  const enqueueSpans = () => exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.PRODUCER);

  it("enqueue makes one PRODUCER span per event, under the active span, and stores its traceparent", async () => {
    const tracer = trace.getTracer("test");
    const ids = await tracer.startActiveSpan("request", async (request) => {
      try {
        return await enqueue(handle.db, [
          { topic: "orders", eventType: "order.placed", payload: { n: 1 } },
          {
            topic: "orders",
            eventType: "order.placed",
            payload: { n: 2 },
            // A caller's own pair gives way to the span's: its tracestate would describe another span.
            headers: {
              traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01`,
              tracestate: "x=1",
              tenant: "t1",
            },
          },
        ]);
      } finally {
        request.end();
      }
    });
    const request = exporter.getFinishedSpans().find((span) => span.name === "request");
    const spans = enqueueSpans();
    expect(spans).toHaveLength(2);
    for (const [index, id] of ids.entries()) {
      const span = spans.find((candidate) => candidate.attributes["messaging.message.id"] === id);
      expect(span?.name).toBe("enqueue orders");
      expect(span?.attributes).toEqual({
        // OpenTelemetry's semantic conventions v1.44.0 (docs/messaging/sns.md): SNS is `aws.sns`.
        "messaging.system": "aws.sns",
        "messaging.operation.type": "create",
        "messaging.operation.name": "enqueue",
        "messaging.destination.name": "orders",
        "messaging.message.id": id,
        "outbox.event_type": "order.placed",
      });
      expect(span?.parentSpanContext?.spanId).toBe(request?.spanContext().spanId);
      expect(span?.spanContext().traceId).toBe(request?.spanContext().traceId);
      const headers = await storedHeaders(id);
      expect(headers.traceparent).toBe(`00-${span?.spanContext().traceId}-${span?.spanContext().spanId}-01`);
      expect(headers).not.toHaveProperty("tracestate");
      if (index === 1) expect(headers.tenant).toBe("t1");
    }
  });

  it("log lines written inside a span carry its trace_id and span_id; outside, neither", () => {
    const { lines, log } = capturingLogger();
    const child = log.child({ eventId: "e1" });
    log.info("before");
    const ids = trace.getTracer("test").startActiveSpan("handler", (span) => {
      log.info("inside");
      child.warn("inside, child logger");
      span.end();
      return span.spanContext();
    });
    log.info("after");
    expect(lines.map((line) => [line.msg, line.trace_id, line.span_id])).toEqual([
      ["before", undefined, undefined],
      ["inside", ids.traceId, ids.spanId],
      ["inside, child logger", ids.traceId, ids.spanId],
      ["after", undefined, undefined],
    ]);
  });

  describe("the trace headers count against SNS's limits, and never make an event refused", () => {
    const eventType = "payload.measured";
    /** name + "String" + value, as SNS counts an attribute. */
    const attribute = (name: string, value: string) => Buffer.byteLength(`${name}String${value}`);
    const traceparentBytes = attribute("traceparent", `00-${"0".repeat(32)}-${"0".repeat(16)}-01`);
    /** An event whose message, without trace headers, is `SNS limit - room` bytes. */
    const eventLeaving = (room: number): NewEvent & { id: string } => {
      const id = uuidv7();
      const base = attribute("event_id", id) + attribute("event_type", eventType);
      return { id, topic: "orders", eventType, payload: "x".repeat(MAX_MESSAGE_BYTES - base - room - 2) };
    };

    it("an event with room for traceparent stores it", async () => {
      const event = eventLeaving(traceparentBytes);
      await enqueue(handle.db, [event]);
      expect((await storedHeaders(event.id)).traceparent).toMatch(traceparentPattern);
    });

    it("one byte less room: stored without it, and the enqueue span says why", async () => {
      const event = eventLeaving(traceparentBytes - 1);
      await enqueue(handle.db, [event]);
      expect(await storedHeaders(event.id)).toEqual({});
      const [span] = enqueueSpans();
      expect(span?.events.map((spanEvent) => spanEvent.name)).toEqual(["trace context not stored"]);
      expect(span?.events[0]?.attributes?.reason).toMatch(
        new RegExp(`message would be ${MAX_MESSAGE_BYTES + 1} bytes`),
      );
    });

    it("8 headers of the caller's own (SNS's 10 less event_id and event_type): stored without traceparent", async () => {
      const headers = Object.fromEntries(Array.from({ length: 8 }, (_, n) => [`h${n}`, "v"]));
      const [id] = await enqueue(handle.db, [{ topic: "orders", eventType, payload: {}, headers }]);
      expect(await storedHeaders(id ?? "")).toEqual(headers);
    });

    it("an event too big without trace headers is refused as before, and its span ends as an error", async () => {
      const event = eventLeaving(-1);
      const attempt = enqueue(handle.db, [event]);
      await expect(attempt).rejects.toBeInstanceOf(OutboxValidationError);
      await expect(attempt).rejects.toThrow(`message would be ${MAX_MESSAGE_BYTES + 1} bytes`);
      const [span] = enqueueSpans();
      expect(span?.status).toMatchObject({ code: SpanStatusCode.ERROR });
    });
  });
});
