import { fileURLToPath } from "node:url";
import { SpanKind, trace } from "@opentelemetry/api";
import { migrateApiTables } from "@outbox/api";
import { enqueue } from "@outbox/client";
import { type BootstrappedResources, bootstrapResources, startEquipmentStub } from "@outbox/devstack";
import { apiEnv, consumerEnv, relayEnv } from "@outbox/drills";
import type { ExampleEffectsTable } from "@outbox/example-handlers";
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
import { apiPort } from "@outbox/test-kit/process";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

// The messaging attributes, span names and kinds asserted here are OpenTelemetry's semantic conventions
// v1.44.0 (docs/messaging/messaging-spans.md, sns.md, sqs.md): `messaging.system` is `aws.sns` for SNS
// and `aws_sqs` for SQS, `messaging.destination.name` the topic's or queue's name (the ARN goes in
// `aws.sns.topic.arn`, the URL in `aws.sqs.queue.url`), a span is named `{operation name} {destination}`,
// and its kind follows its operation type (send: PRODUCER when its context is the message's, else CLIENT).

// OTLP's span kinds are the API's plus one (0 is "unspecified" there).
const PRODUCER = SpanKind.PRODUCER + 1;
const CLIENT = SpanKind.CLIENT + 1;
const CONSUMER = SpanKind.CONSUMER + 1;
const SERVER = SpanKind.SERVER + 1;
const EVENT_TYPE = "trace.checked";

let receiver: OtlpReceiver;
let handle: DatabaseHandle;
let environment: Parameters<typeof relayEnv>[0];
let resources: BootstrappedResources;
/** The last segment of an ARN or a URL: the name the conventions put in messaging.destination.name. */
const lastSegment = (text: string) => text.split(/[:/]/).at(-1) ?? "";
// A failed expectation must not leave a daemon behind.
const fleet = new DaemonFleet();

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const database = await createMigratedTestDatabase("telemetry", { service: "telemetry-test", poolMax: 2 });
  handle = database.handle;
  // The photo service's own tables, for the request's trace.
  await migrateApiTables(handle.db);
  resources = await bootstrapResources(stack().aws, {
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
  it("continues each event's trace from enqueue through the relay to its handler; the PublishBatch request's span links to it", async () => {
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
    const topicName = lastSegment(resources.topicArn);
    const queueName = lastSegment(resources.queueUrl);
    const publishes = of("relay", CLIENT).filter((span) => span.attributes["messaging.system"] === "aws.sns");
    expect(publishes.length).toBeGreaterThanOrEqual(1);
    // Each PublishBatch request: a "send" of a batch, CLIENT (the messages carry other spans' contexts).
    for (const publish of publishes) {
      expect(publish).toMatchObject({
        name: `publish ${topicName}`,
        attributes: {
          "messaging.operation.type": "send",
          "messaging.operation.name": "publish",
          "messaging.destination.name": topicName,
          "aws.sns.topic.arn": resources.topicArn,
          "messaging.batch.message_count": expect.any(Number),
        },
      });
      expect(publish.attributes).not.toHaveProperty("messaging.message.id");
    }
    expect(
      publishes.reduce((sum, span) => sum + Number(span.attributes["messaging.batch.message_count"]), 0),
    ).toBe(ids.length);
    // The SDK call itself, retries included, under each request's span: with SNS's request id.
    for (const publish of publishes) {
      expect(
        of("relay", CLIENT).filter((span) => span.parentSpanId === publish.spanId),
        "the PublishBatch call's span",
      ).toEqual([
        expect.objectContaining({
          name: "SNS.PublishBatch",
          traceId: publish.traceId,
          attributes: expect.objectContaining({
            "rpc.system": "aws-api",
            "rpc.service": "SNS",
            "rpc.method": "PublishBatch",
            "aws.request_id": expect.any(String),
          }),
        }),
      ]);
    }
    const links = publishes.flatMap((span) => span.links);
    for (const id of ids) {
      const producer = of("tracing-test", PRODUCER).find(
        (span) => span.attributes["messaging.message.id"] === id,
      );
      const request = spans.find((span) => span.spanId === producer?.parentSpanId);
      // The "create" span: the outbox's logical topic is all `enqueue` knows of the destination.
      expect(producer).toMatchObject({
        name: "enqueue drill",
        attributes: {
          "messaging.system": "aws.sns",
          "messaging.operation.type": "create",
          "messaging.operation.name": "enqueue",
          "messaging.destination.name": "drill",
        },
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

      // The relay: the event's own publish span, the producer's child in the producer's trace.
      const eventPublish = of("relay", PRODUCER).find(
        (span) => span.attributes["messaging.message.id"] === id,
      );
      expect(eventPublish).toMatchObject({
        name: `publish ${topicName}`,
        traceId,
        parentSpanId: spanId,
        attributes: {
          "messaging.system": "aws.sns",
          "messaging.operation.type": "send",
          "messaging.operation.name": "publish",
          "messaging.destination.name": topicName,
          "aws.sns.topic.arn": resources.topicArn,
        },
      });
      // One message: no batch count on it (sns.md, note 4).
      expect(eventPublish?.attributes).not.toHaveProperty("messaging.batch.message_count");

      // The consumer: its handler span continues the event's trace, as the relay's publish span's child.
      const processSpan = of("consumer", CONSUMER).find(
        (span) => span.attributes["messaging.message.id"] === id,
      );
      expect(processSpan).toMatchObject({
        name: `process ${queueName}`,
        traceId,
        parentSpanId: eventPublish?.spanId,
        attributes: {
          "messaging.system": "aws_sqs",
          "messaging.operation.type": "process",
          "messaging.operation.name": "process",
          "messaging.destination.name": queueName,
          "aws.sqs.queue.url": resources.queueUrl,
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
        "messaging.system": "aws.sns",
        "messaging.operation.type": "send",
      });
    }
    expect(new Set(links.map((link) => link.traceId)).size).toBe(2);
    // The claims, marks, receives and deletes ran under no span: none of them started a trace.
    const background = spans.filter(
      (span) =>
        (span.service === "relay" || span.service === "consumer") &&
        span.parentSpanId === "" &&
        (span.attributes["db.system.name"] !== undefined || span.attributes["rpc.system"] !== undefined),
    );
    expect(background).toEqual([]);
  }, 90_000);

  it("runs one trace from an HTTP request through the api, the outbox and the relay to the handler", async () => {
    // The caller's own trace: the api continues it, and so does everything after.
    const callerTraceId = "c".repeat(32);
    const callerSpanId = "d".repeat(16);
    const otlp = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "600000",
    };
    const equipment = await startEquipmentStub();
    try {
      const api = fleet.api("api", apiEnv(environment, equipment.url, otlp));
      const daemons = startDaemons(otlp);
      const response = await fetch(`http://127.0.0.1:${await apiPort(api)}/photos`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          traceparent: `00-${callerTraceId}-${callerSpanId}-01`,
        },
        body: JSON.stringify({ title: "traced", gearIds: ["g1"] }),
      });
      expect(response.status).toBe(201);
      const { id: photoId } = (await response.json()) as { id: string };
      const event = await handle.db
        .selectFrom("outbox")
        .select("id")
        .where("event_type", "=", "photo.posted")
        .where(sql<boolean>`payload->>'photoId' = ${photoId}`)
        .executeTakeFirstOrThrow();
      await runUntilHandled(daemons, [event.id]);
      expect((await api.stop("SIGTERM")).code, api.stderr()).toBe(0);
      expect(api.lines.some((line) => line.msg === "traces flushed")).toBe(true);

      const spans = receiver.spans().filter((span) => span.traceId === callerTraceId);
      const one = (service: string, kind: number) => {
        const found = spans.filter((span) => span.service === service && span.kind === kind);
        expect(found, `${service} spans of kind ${kind}`).toHaveLength(1);
        return found[0] as ReceivedSpan;
      };
      const request = one("api", SERVER);
      const enqueued = one("api", PRODUCER);
      const published = one("relay", PRODUCER);
      const processed = one("consumer", CONSUMER);
      // Parented in the order the event travelled.
      expect(request).toMatchObject({
        name: "POST /photos",
        parentSpanId: callerSpanId,
        attributes: {
          "http.request.method": "POST",
          "http.route": "/photos",
          "http.response.status_code": 201,
        },
      });
      expect(enqueued).toMatchObject({ name: "enqueue drill", parentSpanId: request.spanId });
      expect(published).toMatchObject({
        parentSpanId: enqueued.spanId,
        attributes: { "messaging.message.id": event.id },
      });
      expect(processed).toMatchObject({
        parentSpanId: published.spanId,
        attributes: { "messaging.message.id": event.id, "outbox.result": "processed" },
      });
      expect(spans.find((span) => span.name === "write effect")?.parentSpanId).toBe(processed.spanId);

      // The statements each step ran, as CLIENT spans under it: the api's writes under the request,
      // the consumer's inbox claim and commit under the message's span.
      const below = (ancestor: ReceivedSpan, span: ReceivedSpan): boolean => {
        const parent = spans.find((candidate) => candidate.spanId === span.parentSpanId);
        return parent !== undefined && (parent.spanId === ancestor.spanId || below(ancestor, parent));
      };
      const statements = (service: string, under: ReceivedSpan) =>
        spans
          .filter(
            (span) =>
              span.service === service &&
              span.kind === CLIENT &&
              span.attributes["db.system.name"] === "postgresql" &&
              below(under, span),
          )
          .map((span) => span.attributes["db.operation.name"]);
      // A deadline transaction's COMMIT rides behind the check that its transaction is still the one
      // open (`DO …; COMMIT`, one round trip): the span is named by its first statement.
      expect(statements("api", request)).toEqual(expect.arrayContaining(["BEGIN", "INSERT", "DO"]));
      expect(statements("consumer", processed)).toEqual(expect.arrayContaining(["BEGIN", "INSERT", "DO"]));
      const apiInsert = spans.find(
        (span) => span.service === "api" && span.attributes["db.operation.name"] === "INSERT",
      );
      // The statement as sent, values apart: the photo's title is nowhere in the span.
      expect(apiInsert?.attributes["db.query.text"]).toMatch(/insert into/i);
      expect(JSON.stringify(spans.filter((span) => span.service === "api"))).not.toContain("traced");
    } finally {
      await equipment.close();
    }
  }, 90_000);

  it("over http/protobuf, the default protocol, the daemons' spans arrive too", async () => {
    const exportsBefore = receiver.protobufExports().length;
    const ids = await enqueue(handle.db, [{ topic: "drill", eventType: EVENT_TYPE, payload: { n: 4 } }]);
    // Only the endpoint: the protocol is the spec's default.
    const daemons = startDaemons({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: "600000",
    });
    await runUntilHandled(daemons, ids);
    for (const daemon of [daemons.relay, daemons.consumer]) {
      expect(daemon.lines.find((line) => line.msg === "tracing on")).toMatchObject({
        protocol: "http/protobuf",
      });
      expect(daemon.lines.some((line) => line.msg === "traces flushed")).toBe(true);
    }
    // Not decoded here: a span's name is its UTF-8 bytes in the body (the relay's, the consumer's).
    const bodies = Buffer.concat(receiver.protobufExports().slice(exportsBefore));
    for (const text of [
      `publish ${lastSegment(resources.topicArn)}`,
      `process ${lastSegment(resources.queueUrl)}`,
    ]) {
      expect(bodies.includes(Buffer.from(text)), text).toBe(true);
    }
  }, 90_000);

  it("a daemon asked for traces over gRPC, which we do not ship, refuses to start: one line naming it, exit 78", async () => {
    const requestsBefore = receiver.requests();
    const daemons = startDaemons({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    });
    for (const [service, daemon] of [
      ["relay", daemons.relay],
      ["consumer", daemons.consumer],
    ] as const) {
      const exit = await daemon.exited;
      expect(exit.code, daemon.stderr()).toBe(78);
      expect(daemon.stderr().trim().split("\n")).toEqual([
        `${service}: config error: OTEL_EXPORTER_OTLP_PROTOCOL: OTLP protocol "grpc" is not supported for traces: use http/protobuf or http/json (a collector takes OTLP/HTTP on port 4318)`,
      ]);
      expect(daemon.lines.map((line) => line.msg)).not.toContain("started");
    }
    expect(receiver.requests()).toBe(requestsBefore);
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
