import { describe, expect, it } from "vitest";
import { container, environmentOf, synth } from "./support/synth.js";

const equipmentUrl = "http://equipment.internal:8080";

/** What an operator sets for Node, the SDK and OpenTelemetry: no daemon setting reads these. */
const platform = {
  NODE_EXTRA_CA_CERTS: "/etc/ssl/certs/corporate-proxy.pem",
  NODE_OPTIONS: "--enable-source-maps --max-old-space-size=384",
  OTEL_SERVICE_NAME: "outbox",
  OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
  AWS_RETRY_MODE: "adaptive",
};

describe("the platform's variables", () => {
  // Traces off: with them on, the stack sets the OTLP endpoint itself (its collector sidecar's).
  const { template } = synth({
    telemetry: { traces: false },
    relay: { environment: platform },
    consumer: { environment: platform },
    api: { equipmentUrl, environment: platform },
  });

  it("are accepted on every daemon and reach its container", () => {
    for (const daemon of ["relay", "consumer", "api"]) {
      expect(environmentOf(container(template, daemon))).toMatchObject(platform);
    }
  });

  it("reach the one-off tasks of the same images too (migration, reconciliation)", () => {
    expect(environmentOf(container(template, "migrate"))).toMatchObject(platform);
    expect(environmentOf(container(template, "reconcile"))).toMatchObject(platform);
  });
});

describe("names nobody reads", () => {
  it("still fail the synth, naming the setting a typo most likely meant", () => {
    expect(() => synth({ relay: { environment: { RELAY_BATCH_SIZ: "50" } } })).toThrow(
      /relay: the daemon reads no variable named RELAY_BATCH_SIZ \(did you mean RELAY_BATCH_SIZE\?\)/,
    );
    expect(() => synth({ consumer: { environment: { NODE_EXTRA_CA_CERT: "/ca.pem" } } })).toThrow(
      /NODE_EXTRA_CA_CERT \(did you mean NODE_EXTRA_CA_CERTS\?\)/,
    );
    // The message lists what a task may set besides the daemon's settings.
    expect(() => synth({ relay: { environment: { TOTALLY_UNKNOWN: "1" } } })).toThrow(
      /named TOTALLY_UNKNOWN\. Besides its own settings a task may set only NODE_EXTRA_CA_CERTS, NODE_OPTIONS, .*OTEL_\*/,
    );
  });

  it("include AWS credentials: the task role provides them, the template must not hold a key", () => {
    expect(() =>
      synth({ consumer: { environment: { AWS_ACCESS_KEY_ID: "AKIA", AWS_SECRET_ACCESS_KEY: "x" } } }),
    ).toThrow(/no variable named AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY/);
  });

  it("include the bare OTEL_ prefix", () => {
    expect(() => synth({ relay: { environment: { OTEL_: "1" } } })).toThrow(/no variable named OTEL_\b/);
  });
});
