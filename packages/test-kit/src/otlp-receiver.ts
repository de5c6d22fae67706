import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One span as an OTLP/JSON export carried it, flattened with its resource's service name. */
export interface ReceivedSpan {
  readonly service: string;
  readonly scope: string;
  readonly name: string;
  /** OTLP's enum: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly attributes: Record<string, string | number | boolean>;
  readonly links: {
    traceId: string;
    spanId: string;
    attributes: Record<string, string | number | boolean>;
  }[];
  readonly status: { code?: number; message?: string };
}

export interface OtlpReceiver {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT should say: the exporter appends /v1/traces. */
  readonly url: string;
  /** Every span received so far, in arrival order. */
  spans(): ReceivedSpan[];
  /** Export requests received so far (any path), to tell "nothing was sent" from "nothing parsed". */
  requests(): number;
  /**
   * The bodies of OTLP/protobuf exports (http/protobuf), as sent: not decoded, but a string in them
   * (a span's name, a service's) is its UTF-8 bytes, so a test can look for it.
   */
  protobufExports(): Buffer[];
  close(): Promise<void>;
}

interface KeyValue {
  key: string;
  value: { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
}

interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        name: string;
        kind: number;
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        attributes?: KeyValue[];
        links?: { traceId: string; spanId: string; attributes?: KeyValue[] }[];
        status?: { code?: number; message?: string };
      }[];
    }[];
  }[];
}

function flatten(attributes: readonly KeyValue[] = []): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes) {
    // OTLP/JSON writes 64-bit integers as strings.
    const scalar =
      value.intValue !== undefined
        ? Number(value.intValue)
        : (value.stringValue ?? value.boolValue ?? value.doubleValue);
    if (scalar !== undefined) out[key] = scalar;
  }
  return out;
}

function spansOf(request: ExportRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = String(flatten(resourceSpans.resource?.attributes)["service.name"] ?? "");
    return (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans) =>
      (scopeSpans.spans ?? []).map((span) => ({
        service,
        scope: scopeSpans.scope?.name ?? "",
        name: span.name,
        kind: span.kind,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? "",
        attributes: flatten(span.attributes),
        links: (span.links ?? []).map((link) => ({
          traceId: link.traceId,
          spanId: link.spanId,
          attributes: flatten(link.attributes),
        })),
        status: span.status ?? {},
      })),
    );
  });
}

/**
 * A stand-in for an OpenTelemetry collector: OTLP/HTTP with JSON bodies (OTEL_EXPORTER_OTLP_PROTOCOL=
 * http/json), parsed into spans, or protobuf ones (http/protobuf, the default), kept as sent; on
 * 127.0.0.1 and a free port. Answers every export with success; close it in afterAll.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const protobufExports: Buffer[] = [];
  let requests = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      requests += 1;
      if (request.method !== "POST" || request.url !== "/v1/traces") {
        response.writeHead(404).end();
        return;
      }
      if (request.headers["content-type"] === "application/x-protobuf") {
        protobufExports.push(Buffer.concat(chunks));
        // An empty ExportTraceServiceResponse is zero bytes: full success.
        response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
        return;
      }
      try {
        received.push(...spansOf(JSON.parse(Buffer.concat(chunks).toString("utf8")) as ExportRequest));
      } catch {
        response.writeHead(400).end();
        return;
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    requests: () => requests,
    protobufExports: () => [...protobufExports],
    close: () =>
      new Promise<void>((resolve, reject) => {
        // Exporters keep their connections alive; the server would wait for them otherwise.
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
