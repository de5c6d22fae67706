import { consumerSettings, consumerTimeouts } from "@outbox/consumer";
import { relaySettings, relayTimeouts } from "@outbox/relay";
import { resolveDaemonConfig } from "@outbox/shared";
import { describe, expect, it } from "vitest";
import {
  consumerBudget,
  FARGATE_MAX_STOP_TIMEOUT_SECONDS,
  HANDLER_ATTEMPTS,
  relayBudget,
  STOP_MARGIN_MS,
  STOP_WAVES,
  startupProblems,
} from "../lib/budget.js";
import { container, environmentOf, synth } from "./support/synth.js";

// The relay refuses to start without a topic to route rows to.
const routed = { RELAY_DEFAULT_TOPIC_ARN: "arn:aws:sns:eu-west-1:123456789012:topic" };

/** The environment a container gets, with CloudFormation references replaced by plausible values. */
function containerEnvironment(name: string): Record<string, string> {
  const { template } = synth();
  const env: Record<string, string> = {
    DATABASE_URL: "postgres://relay@db.internal:5432/app",
  };
  for (const [key, value] of Object.entries(environmentOf(container(template, name)))) {
    env[key] = typeof value === "string" ? value : "";
  }
  const resolved: Record<string, string> = {
    RELAY_TOPIC_ARNS: "events=arn:aws:sns:eu-west-1:123456789012:topic",
    CONSUMER_QUEUE_URL: "https://sqs.eu-west-1.amazonaws.com/123456789012/queue",
    CONSUMER_DLQ_URL: "https://sqs.eu-west-1.amazonaws.com/123456789012/dlq",
    AWS_REGION: "eu-west-1",
  };
  for (const [key, value] of Object.entries(resolved)) if (key in env) env[key] = value;
  // verify-full reads the RDS bundle, which is in the image (packaging.test.ts), not on this machine.
  if (env.DB_SSL_MODE === "verify-full") env.DB_SSL_MODE = "require";
  return env;
}

describe("the stop budget", () => {
  it("gives the relay its drain, its shutdown overhead and a margin before SIGKILL", () => {
    const budget = relayBudget();
    expect(budget.drainTimeoutMs).toBe(relaySettings.drainTimeoutMs.default);
    expect(budget.shutdownOverheadMs).toBe(relaySettings.shutdownOverheadMs.default);
    expect(budget.stopTimeoutMs).toBe(budget.stopTimeoutSeconds * 1000);
    expect(budget.stopTimeoutMs).toBeGreaterThanOrEqual(
      budget.drainTimeoutMs + budget.shutdownOverheadMs + STOP_MARGIN_MS,
    );
    expect(budget.stopTimeoutMs).toBeGreaterThan(budget.drainTimeoutMs + budget.shutdownOverheadMs);
    expect(budget.stopTimeoutSeconds).toBeLessThanOrEqual(FARGATE_MAX_STOP_TIMEOUT_SECONDS);
    expect(budget.stopTimeoutSeconds).toBe(30);
  });

  it("gives the consumer an open long poll on top of its drain, overhead and margin", () => {
    const budget = consumerBudget({ maxTaskCount: 10 });
    expect(budget.drainTimeoutMs).toBe(consumerSettings.drainTimeoutMs.default);
    expect(budget.waitTimeSeconds).toBe(consumerSettings.waitTimeSeconds.default);
    const waitMs = budget.waitTimeSeconds * 1000;
    expect(waitMs + budget.drainTimeoutMs).toBeLessThan(budget.stopTimeoutMs);
    expect(budget.stopTimeoutMs).toBeGreaterThanOrEqual(
      waitMs + budget.drainTimeoutMs + budget.shutdownOverheadMs + STOP_MARGIN_MS,
    );
    expect(budget.stopTimeoutSeconds).toBeLessThanOrEqual(FARGATE_MAX_STOP_TIMEOUT_SECONDS);
    expect(budget.stopTimeoutSeconds).toBe(40);
  });

  it("follows a longer drain, and refuses one that Fargate cannot grant", () => {
    expect(relayBudget({ drainTimeoutMs: 60_000 }).stopTimeoutSeconds).toBe(70);
    expect(() => relayBudget({ drainTimeoutMs: 115_000 })).toThrow(/Fargate maximum of 120 s/);
    expect(() => consumerBudget({ maxTaskCount: 1, drainTimeoutMs: 101_000 })).toThrow(/Fargate maximum/);
    expect(() => synth({ relay: { drainTimeoutMs: 118_000 } })).toThrow(/Fargate maximum/);
  });

  it("refuses at synth time a task environment the relay would refuse at start-up", () => {
    // A 70 s drain fits Fargate (stopTimeout 80 s), but the relay's lease (60 s) must outlast drain + statement.
    expect(() => synth({ relay: { drainTimeoutMs: 70_000 } })).toThrow(/RELAY_LEASE_MS/);
    expect(() =>
      synth({ relay: { drainTimeoutMs: 70_000, environment: { RELAY_LEASE_MS: "120000" } } }),
    ).not.toThrow();
    expect(() => synth({ relay: { environment: { RELAY_BATCH_SIZE: "0" } } })).toThrow(
      /RELAY_BATCH_SIZE: must be between/,
    );
  });

  it("refuses at synth time a task environment the consumer would refuse at start-up", () => {
    // 12 s of drain cannot hold a 10 s long poll plus a 5 s SQS call.
    expect(() => synth({ consumer: { drainTimeoutMs: 12_000 } })).toThrow(/CONSUMER_WAIT_TIME_SECONDS/);
    expect(() => synth({ consumer: { environment: { CONSUMER_CONCURRENCY: "25" } } })).toThrow(
      /CONSUMER_CONCURRENCY: 25 must be less than DB_POOL_MAX/,
    );
    // A handlers module lives in the consumer's image: the synth cannot look for it, the daemon does.
    expect(() => synth({ consumer: { handlersModule: "/app/handlers/index.js" } })).not.toThrow();
    // So does verify-full's CA bundle; what the synth can check about TLS still fails it.
    expect(startupProblems("relay", { ...routed, DB_SSL_MODE: "verify-full" })).toEqual([]);
    expect(startupProblems("relay", { ...routed, DB_SSL_MODE: "verify" })).toEqual([
      expect.stringMatching(/^DB_SSL_MODE: /),
    ]);
  });

  it("reports every start-up problem of either daemon as ENV: message lines", () => {
    expect(startupProblems("relay", { ...routed, RELAY_BATCH_SIZE: "0" })).toEqual([
      expect.stringMatching(/^RELAY_BATCH_SIZE: must be between/),
    ]);
    expect(startupProblems("consumer", { CONSUMER_QUEUE_URL: "https://sqs.example/q" })).toEqual([]);
    expect(
      startupProblems("consumer", { CONSUMER_QUEUE_URL: "https://sqs.example/q", STOP_TIMEOUT_MS: "20000" }),
    ).toEqual([expect.stringMatching(/^CONSUMER_DRAIN_TIMEOUT_MS: .* must be less than STOP_TIMEOUT_MS/)]);
  });

  it("passes the relay's own start-up checks with the environment the task definition sets", () => {
    const env = containerEnvironment("relay");
    expect(startupProblems("relay", env)).toEqual([]);
    const { config } = resolveDaemonConfig(relaySettings, relayTimeouts, env);
    expect(config.stopTimeoutMs).toBe(relayBudget().stopTimeoutMs);
  });

  it("passes the consumer's own start-up checks with the environment the task definition sets", () => {
    const env = containerEnvironment("consumer");
    expect(startupProblems("consumer", env)).toEqual([]);
    const { config } = resolveDaemonConfig(consumerSettings, consumerTimeouts, env);
    expect(config.stopTimeoutMs).toBe(consumerBudget({ maxTaskCount: 10 }).stopTimeoutMs);
  });
});

describe("the queue's numbers", () => {
  const budget = consumerBudget({ maxTaskCount: 10 });

  it("leases for the consumer's visibility timeout, which heartbeats can keep ahead of the deadline", () => {
    expect(budget.visibilityTimeoutSeconds).toBe(consumerSettings.visibilityTimeoutSeconds.default);
    const requestMs = consumerSettings.awsRequestTimeoutMs.default ?? Number.NaN;
    expect(budget.visibilityTimeoutSeconds * 1000).toBeGreaterThan(budget.visibilityMarginMs + requestMs);
    // The whole deadline plus its margin must fit SQS's 12 h visibility ceiling.
    expect(budget.handlerTimeoutMs + budget.visibilityMarginMs).toBeLessThanOrEqual(43_200_000);
  });

  it("sizes the redrive for stop waves on top of the genuine attempts", () => {
    expect(budget.releaseAllowance).toBe(STOP_WAVES * 10);
    expect(budget.maxReceiveCount).toBe(HANDLER_ATTEMPTS + STOP_WAVES * 10);
    expect(consumerBudget({ maxTaskCount: 4 }).maxReceiveCount).toBe(HANDLER_ATTEMPTS + STOP_WAVES * 4);
    expect(budget.maxReceiveCount).toBeLessThanOrEqual(1000);
  });

  it("retains messages long enough to exhaust the redrive, and the DLQ longer than the queue", () => {
    expect(budget.queueRetentionSeconds).toBe((consumerSettings.queueRetentionHours.default ?? 0) * 3600);
    expect(budget.queueRetentionSeconds).toBeGreaterThan(
      budget.maxReceiveCount * budget.longestInvisibleSeconds,
    );
    expect(budget.dlqRetentionSeconds).toBeGreaterThan(budget.queueRetentionSeconds);
  });
});
