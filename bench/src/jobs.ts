/** Job descriptions the parent sends to a measured child (see worker.ts). */
import type { AwsEndpoints } from "@outbox/devstack";
import type { RetentionOptions } from "@outbox/relay";
import type { PtoController } from "./pto-controllers.js";
import type { PtoNames } from "./pto-fixtures.js";

export type RelayImpl = "ours" | "pto-polling" | "pto-replication";
/** A relay or "bare-sdk": PublishBatch loops only, no Postgres (the SNS emulator's and the SDK's ceiling). */
export type RelaySubject = RelayImpl | "bare-sdk";
export type Sink = "null" | "sns";

export interface RelayJob {
  kind: "relay";
  impl: RelaySubject;
  sink: Sink;
  url: string;
  aws: AwsEndpoints;
  topicArn: string;
  /** Ours: rows per claim. pto-polling: nextMessagesBatchSize. */
  batchSize: number;
  /** Distinct events after which the child reports on its own; null waits for `finish`. */
  expected: number | null;
  capMs: number;
  /** Ours: LISTEN for the insert NOTIFY (else poll only). */
  listen: boolean;
  /** Report the publish time of every event (latency runs). */
  recordTimes: boolean;
  /** pto-polling: nextMessagesPollingIntervalInMs; ours: pollIntervalMs. */
  pollIntervalMs: number;
  /** Connections each side may use for its handler work. */
  poolMax: number;
  /** Ours, null sink: each PublishBatch is answered this much later (no CPU spent meanwhile). */
  nullLatencyMs?: number;
  pto?: PtoNames;
  /** pto-replication: its concurrency controller (bounded by `poolMax` where it takes a bound). */
  ptoController?: PtoController;
  /** Ours: report how long each claim statement took (the growth scenario's claim p99). */
  timeClaims?: boolean;
  /** Ours: the relay's own retention sweeps while it drains (the growth scenario's retention run). */
  retention?: RetentionOptions;
}

/**
 * "ours-batch": ours with the same effect as a batch handler (defineBatchHandler). "bare-sdk":
 * receive and delete only, no Postgres (the SQS server's ceiling, see scale).
 */
export type ConsumerImpl = "ours" | "ours-batch" | "sqs-consumer" | "sqs-consumer-batch" | "bare-sdk";

export interface ConsumerJob {
  kind: "consumer";
  impl: ConsumerImpl;
  url: string;
  aws: AwsEndpoints;
  queueUrl: string;
  /** Messages in flight at most: ours `concurrency`; sqs-consumer `instances × batchSize`. */
  concurrency: number;
  /** Receive loops: ours `pollers`; sqs-consumer: Consumer instances. */
  pollers: number;
  expected: number | null;
  capMs: number;
  name: string;
  /** sqs-consumer: wire SIGTERM as its README's graceful-shutdown example does. */
  readmeShutdown?: boolean;
}

export type Job = RelayJob | ConsumerJob;

/** Messages sqs-consumer asks for per ReceiveMessage at a given concurrency. */
export function sqsConsumerShape(concurrency: number): { instances: number; batchSize: number } {
  return { instances: Math.ceil(concurrency / 10), batchSize: Math.min(10, concurrency) };
}

/** Our consumer's pollers at a given concurrency: one receive loop per 10 messages in flight. */
export function ourPollers(concurrency: number): number {
  return Math.max(1, Math.ceil(concurrency / 10));
}
