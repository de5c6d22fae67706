import type { SNSClient } from "@aws-sdk/client-sns";
import type { OutboxTables } from "@outbox/client";
import { createRelay, createSnsPublisher, nullPublisher, type Publisher } from "@outbox/relay";
import { createDatabase, sleep } from "@outbox/shared";
import { Kysely, PostgresDialect } from "kysely";
import { CLAIM_MARKER } from "../claim-plan.js";
import type { RelayJob } from "../jobs.js";
import { wallMs } from "../measure.js";
import type { Counter, Subject } from "./measure-subject.js";

/** PublishBatch calls in flight: the Little's-law bound of the SNS latency scenario is built on it. */
export const OUR_PUBLISH_CONCURRENCY = 16;

/** The null sink, answering each call `latencyMs` later when asked to: a bus whose CPU is elsewhere. */
function nullSink(latencyMs: number): Publisher {
  if (latencyMs === 0) return nullPublisher;
  return {
    async publishBatch(request, deadline) {
      await sleep(latencyMs, deadline.signal);
      return nullPublisher.publishBatch(request, deadline);
    },
  };
}

/**
 * Our relay as a library, on a pool of its own; `times` gets each event's publish time if asked,
 * `claimMs` each claim statement's duration.
 */
export async function ourRelay(
  job: RelayJob,
  sns: SNSClient,
  counter: Counter,
  times: Map<string, number>,
  claimMs: number[],
): Promise<Subject> {
  const handle = createDatabase({
    url: job.url,
    service: "bench-relay",
    poolMax: job.poolMax,
    statementTimeoutMs: 30_000,
    idleInTransactionTimeoutMs: 30_000,
  });
  const inner = job.sink === "null" ? nullSink(job.nullLatencyMs ?? 0) : createSnsPublisher(sns);
  const publisher: Publisher = {
    async publishBatch(request, signal) {
      const result = await inner.publishBatch(request, signal);
      if (job.recordTimes) {
        const at = wallMs();
        for (const entry of request.entries) times.set(entry.id, at);
      }
      return result;
    },
  };
  // The relay exposes no per-claim timing, so a Kysely of its own on the same pool times the claim
  // statement from Kysely's query log (the pool's round trip, without waiting for a connection).
  const db = job.timeClaims
    ? new Kysely<OutboxTables>({
        dialect: new PostgresDialect({ pool: handle.pool }),
        log: (event) => {
          if (event.level === "query" && event.query.sql.includes(CLAIM_MARKER))
            claimMs.push(event.queryDurationMillis);
        },
      })
    : handle.db;
  let relay: ReturnType<typeof createRelay> | undefined;
  // Warm the pool so connection set-up is not measured.
  await Promise.all(Array.from({ length: Math.min(4, job.poolMax) }, () => handle.pool.query("SELECT 1")));
  return {
    start() {
      relay = createRelay({
        db,
        publisher,
        listenUrl: job.listen ? job.url : null,
        topicArns: { bench: job.topicArn },
        batchSize: job.batchSize,
        publishConcurrency: OUR_PUBLISH_CONCURRENCY,
        pollIntervalMs: job.pollIntervalMs,
        ...(job.retention ? { retention: job.retention } : {}),
      });
      relay.on("batch", (report) => counter.add(report.published));
      relay.start();
    },
    async stop() {
      await relay?.drain();
      await handle.close(5_000);
    },
  };
}
