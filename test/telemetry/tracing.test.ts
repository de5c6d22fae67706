import { fileURLToPath } from "node:url";
import { SpanKind, trace } from "@opentelemetry/api";
import { enqueue } from "@outbox/client";
import { type BootstrappedResources, bootstrapResources } from "@outbox/devstack";
import { consumerEnv, type ExampleEffectsTable, relayEnv } from "@outbox/drills";
import { createLogger, type DatabaseHandle, startTracing } from "@outbox/shared";
import {
  createMigratedTestDatabase,
  DaemonFleet,
  type DaemonProcess,
  type LogLine,
  type OtlpReceiver,
  type ReceivedSpan,
  stack,
  startOtlpReceiver,
  uniqueName,
} from "@outbox/test-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

// OTLP's span kinds are the API's plus one (0 is "unspecified" there).
const PRODUCER = SpanKind.PRODUCER + 1;
const CLIENT = SpanKind.CLIENT + 1;
const CONSUMER = SpanKind.CONSUMER + 1;
const EVENT_TYPE = "trace.checked";

let receiver: OtlpReceiver;
let handle: DatabaseHandle;
let environment: Parameters<typeof relayEnv>[0];
// A failed expectation must not leave a daemon behind.
const fleet = new DaemonFleet();

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const database = await createMigratedTestDatabase("telemetry", { service: "telemetry-test", poolMax: 2 });
  handle = database.handle;
  const resources: BootstrappedResources = await bootstrapResources(stack().aws, {
    name: uniqueName("telemetry"),
    rawDelivery: true,
  });
  // The drills' environment builders give the relay and consumer processes their usual settings.
  environment = {
    stack: stack(),
    databaseUrl: database.url,
    resources,
    database: handle,
    close: async () => {
      await handle.close(5_000);
    },
  };
});
afterAll(async () => {
  await fleet.killAll();
  await receiver.close();
  await handle.close(5_000);
});

function startDaemons(extraEnv: Record<string, string>): { relay: DaemonProcess; consumer: DaemonProcess } {
  const relay = fleet.relay("relay", relayEnv(environment, extraEnv));
  const consumer = fleet.consumer(
    "consumer",
    consumerEnv(environment, {
      CONSUMER_HANDLERS_MODULE: fileURLToPath(new URL("./fixtures/traced-handlers.ts", import.meta.url)),
      ...extraEnv,
    }),
  );
  return { relay, consumer };
}

/** Waits until every event's handler has committed its effect, then stops both daemons with SIGTERM. */
async function runUntilHandled(daemons: { relay: DaemonProcess; consumer: DaemonProcess }, ids: string[]) {
  await expect
    .poll(
      async () =>
        (
          await handle.db
            .withTables<{ example_effects: ExampleEffectsTable }>()
            .selectFrom("example_effects")
            .select("event_id")
            .where("event_id", "in", ids)
            .execute()
        ).length,
      { timeout: 30_000, interval: 200 },
    )
    .toBe(ids.length);
  const [relayExit, consumerExit] = await Promise.all([
    daemons.relay.stop("SIGTERM"),
    daemons.consumer.stop("SIGTERM"),
  ]);
  expect(relayExit.code, daemons.relay.stderr()).toBe(0);
  expect(consumerExit.code, daemons.consumer.stderr()).toBe(0);
}

function handlerLine(consumer: DaemonProcess, eventId: string): LogLine | undefined {
  return consumer.lines.find((line) => line.msg === "traced handler ran" && line.eventId === eventId);
}

describe("tracing across enqueue, the relay process and the consumer process", () => {
  it("continues each event's trace from enqueue to its handler; the relay's publish span links to it", async () => {
    // The test process is the producer: the same SDK set-up as the daemons, exporting to the receiver.
    vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url);
    vi.stubEnv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json");
    const ids: string[] = [];
    try {
      const log = createLogger({ service: "tracing-test", version: "0", level: "silent" });
      const tracing = await startTracing({ service: "tracing-test", version: "0", log });
      expect(tracing.enabled).toBe(true);
      // Two requests, two traces: each enqueues one event under a span of its own.
      for (const n of [1, 2]) {
        await trace.getTracer("tracing-test").startActiveSpan(`request ${n}`, async (span) => {
          ids.push(
            ...(await enqueue(handle.db, [{ topic: "drill", eventType: EVENT_TYPE, payload: { n } }])),
          );
          span.end();
        });
      }
      expect(await tracing.shutdown(5_000)).toBe(true);
    } finally {
      vi.unstubAllEnvs();
    }

    const daemons = startDaemons({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      // No export on a timer during the test: the daemons' spans can only arrive by the flush at the stop.
      OTEL_BSP_SCHEDULE_DELAY: "600000",
    });
    await runUntilHandled(daemons, ids);
    for (const daemon of [daemons.relay, daemons.consumer]) {
      expect(daemon.lines.find((line) => line.msg === "tracing on")).toMatchObject({
        endpoint: `${receiver.url}/v1/traces`,
        protocol: "http/json",
      });
      expect(daemon.lines.some((line) => line.msg === "traces flushed")).toBe(true);
    }

    const spans = receiver.spans();
    const of = (service: string, kind: number) =>
      spans.filter((span) => span.service === service && span.kind === kind);
    const publishes = of("relay", CLIENT);
    expect(publishes.length).toBeGreaterThanOrEqual(1);
    const links = publishes.flatMap((span) => span.links);
    for (const id of ids) {
      const producer = of("tracing-test", PRODUCER).find(
        (span) => span.attributes["messaging.message.id"] === id,
      );
      const request = spans.find((span) => span.spanId === producer?.parentSpanId);
      expect(producer).toMatchObject({
        name: "enqueue drill",
        attributes: { "messaging.system": "aws_sns", "messaging.destination.name": "drill" },
      });
      expect(request?.name).toMatch(/^request \d$/);
      const { traceId, spanId } = producer as ReceivedSpan;

      // The stored row carries the producer's context, which the relay publishes as it is.
      const row = await handle.db
        .selectFrom("outbox")
        .select("headers")
        .where("id", "=", id)
        .executeTakeFirst();
      expect(row?.headers.traceparent).toBe(`00-${traceId}-${spanId}-01`);

      // The relay: a link (not a parent) to the producer, once.
      expect(links.filter((link) => link.traceId === traceId && link.spanId === spanId)).toEqual([
        { traceId, spanId, attributes: { "messaging.message.id": id } },
      ]);

      // The consumer: its handler span continues the producer's trace, as the producer's child.
      const processSpan = of("consumer", CONSUMER).find(
        (span) => span.attributes["messaging.message.id"] === id,
      );
      expect(processSpan).toMatchObject({
        traceId,
        parentSpanId: spanId,
        attributes: {
          "messaging.system": "aws_sqs",
          "messaging.operation.type": "process",
          "outbox.event_type": EVENT_TYPE,
          "outbox.result": "processed",
        },
      });
      // The handler's own span nests under it.
      const effect = spans.find(
        (span) => span.name === "write effect" && span.parentSpanId === processSpan?.spanId,
      );
      expect(effect).toMatchObject({ service: "consumer", traceId });

      // The line the handler logged names the trace and the consumer's span.
      expect(handlerLine(daemons.consumer, id)).toMatchObject({
        recording: true,
        trace_id: traceId,
        span_id: processSpan?.spanId,
      });
    }
    // Each publish span is a root of its own: the events came from two traces.
    for (const publish of publishes) {
      expect(publish.parentSpanId).toBe("");
      expect(publish.attributes).toMatchObject({
        "messaging.system": "aws_sns",
        "messaging.operation.type": "send",
      });
    }
    expect(new Set(links.map((link) => link.traceId)).size).toBe(2);
  }, 90_000);

  it("with no OTEL_* variables nothing starts and nothing is exported, though messages carry a traceparent", async () => {
    const requestsBefore = receiver.requests();
    // No SDK in this process either now: the caller's own traceparent travels as it is.
    const traceparent = `00-${"a".repeat(32)}-${"b".repeat(16)}-01`;
    const ids = await enqueue(handle.db, [
      { topic: "drill", eventType: EVENT_TYPE, payload: { n: 3 }, headers: { traceparent } },
    ]);
    const daemons = startDaemons({});
    await runUntilHandled(daemons, ids);

    const row = await handle.db
      .selectFrom("outbox")
      .select("headers")
      .where("id", "=", ids[0] ?? "")
      .executeTakeFirst();
    expect(row?.headers).toEqual({ traceparent });
    expect(handlerLine(daemons.consumer, ids[0] ?? "")).toMatchObject({ recording: false });
    for (const daemon of [daemons.relay, daemons.consumer]) {
      const messages = daemon.lines.map((line) => line.msg);
      expect(messages).not.toContain("tracing on");
      expect(messages).not.toContain("traces flushed");
      expect(daemon.lines.filter((line) => "trace_id" in line || "span_id" in line)).toEqual([]);
    }
    expect(receiver.requests()).toBe(requestsBefore);
  }, 90_000);
});
