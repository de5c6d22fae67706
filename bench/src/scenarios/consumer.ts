/** Scenario 3 (consumer throughput): our consumer vs sqs-consumer 14 with the same inbox transaction. */
import { randomUUID } from "node:crypto";
import { MAX_BATCH_ENTRIES } from "@outbox/client/internal";
import { bootstrapResources } from "@outbox/devstack";
import { createSqsClient } from "@outbox/shared";
import { runJob } from "../child.js";
import type { BenchContext } from "../context.js";
import { dropDatabase, fillQueue, freshDatabase } from "../fixtures.js";
import { type ConsumerImpl, type ConsumerJob, ourPollers, sqsConsumerShape } from "../jobs.js";
import { BELOW_RESOLUTION, postgresCpuSeconds, summarize, tickedCpuMicrosPerItem } from "../measure.js";

export interface ConsumerRun {
  impl: ConsumerImpl;
  concurrency: number;
  pollers: number;
  messages: number;
  seconds: number;
  messagesPerSecond: number;
  cpuMicrosPerMessage: number;
  maxRssMiB: number;
  postgresCpuSeconds: number;
  duplicates: number;
  capped: boolean;
  /**
   * CPU µs/message minus the bare SDK's in the same round (receive + delete at the same batch size, no
   * Postgres): what the library and its handler add on top of the SQS calls every consumer makes.
   */
  cpuMicrosAboveBareSdk?: number;
}

export function setupSqs(ctx: BenchContext) {
  process.env.AWS_ACCESS_KEY_ID = ctx.stack.aws.credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = ctx.stack.aws.credentials.secretAccessKey;
  return createSqsClient({
    region: ctx.stack.aws.region,
    endpoint: ctx.stack.aws.sqsEndpoint,
    connectionTimeoutMs: 3_000,
    requestTimeoutMs: 10_000,
    maxAttempts: 3,
    maxSockets: 32,
  });
}

export async function filledQueue(
  ctx: BenchContext,
  messages: number,
  visibilityTimeoutSeconds = 30,
): Promise<string> {
  const { queueUrl } = await bootstrapResources(ctx.stack.aws, {
    name: `bench-q-${randomUUID().slice(0, 8)}`,
    rawDelivery: true,
    visibilityTimeoutSeconds,
  });
  const sqs = setupSqs(ctx);
  try {
    await fillQueue(sqs, queueUrl, messages);
  } finally {
    sqs.destroy();
  }
  return queueUrl;
}

export function consumerJob(
  ctx: BenchContext,
  impl: ConsumerImpl,
  url: string,
  queueUrl: string,
  concurrency: number,
  expected: number | null,
): ConsumerJob {
  const pollers =
    impl === "ours" || impl === "ours-batch"
      ? ourPollers(concurrency)
      : sqsConsumerShape(concurrency).instances;
  return {
    kind: "consumer",
    impl,
    url,
    aws: ctx.stack.aws,
    queueUrl,
    concurrency,
    pollers,
    expected,
    capMs: 300_000,
    name: `${impl}-${randomUUID().slice(0, 8)}`,
  };
}

/** How a consumer run differs from the consumer scenario's own. */
export interface ConsumerRunOptions {
  /** The round's bare-SDK run: the run reports its CPU above it. */
  bareSdk?: ConsumerRun;
  /** Messages preloaded; by default the sizes' for the concurrency. */
  messages?: number;
  /** The inbox's consumer name, when the database holds history under it; a fresh one by default. */
  name?: string;
  /** Where its figures are recorded in the report's raw section. */
  recordAs?: string;
}

export async function consumerRun(
  ctx: BenchContext,
  url: string,
  impl: ConsumerImpl,
  concurrency: number,
  options: ConsumerRunOptions = {},
): Promise<ConsumerRun> {
  const { bareSdk } = options;
  const messages =
    options.messages ?? (concurrency === 1 ? ctx.sizes.consumerMessagesAtOne : ctx.sizes.consumerMessages);
  const queueUrl = await filledQueue(ctx, messages);
  const job = {
    ...consumerJob(ctx, impl, url, queueUrl, concurrency, messages),
    ...(options.name ? { name: options.name } : {}),
  };
  const pgBefore = postgresCpuSeconds(ctx.postmasterPid);
  // BENCH_CPU_PROF=dir: a CPU profile of each subject's measured part (adds overhead: not for the figures).
  const result = await runJob(
    job,
    process.env.BENCH_CPU_PROF ? { cpuProfDir: process.env.BENCH_CPU_PROF } : {},
  );
  const cpuMicrosPerMessage = Math.round((result.cpuSeconds / Math.max(1, result.count)) * 1e6);
  const run: ConsumerRun = {
    impl,
    concurrency,
    pollers: job.pollers,
    messages: result.count,
    seconds: result.seconds,
    messagesPerSecond: Math.round(result.count / result.seconds),
    cpuMicrosPerMessage,
    maxRssMiB: result.maxRssMiB,
    postgresCpuSeconds: Number((postgresCpuSeconds(ctx.postmasterPid) - pgBefore).toFixed(2)),
    duplicates: Number(result.duplicates ?? 0),
    capped: result.capped === true,
    ...(bareSdk ? { cpuMicrosAboveBareSdk: cpuMicrosPerMessage - bareSdk.cpuMicrosPerMessage } : {}),
  };
  ctx.record(options.recordAs ?? "consumer-throughput", { ...run });
  const above =
    run.cpuMicrosAboveBareSdk === undefined ? "" : ` (${run.cpuMicrosAboveBareSdk} above the bare SDK)`;
  ctx.log(
    `  consumer ${impl.padEnd(18)} c=${String(concurrency).padStart(2)} pollers=${job.pollers}: ${run.messages} msgs in ${run.seconds.toFixed(2)} s = ${run.messagesPerSecond} msg/s, ${run.cpuMicrosPerMessage} µs CPU/msg${above}, RSS ${run.maxRssMiB} MiB`,
  );
  return run;
}

export async function consumerThroughput(ctx: BenchContext): Promise<void> {
  ctx.log(
    `consumer throughput: ${ctx.sizes.consumerMessages} messages preloaded (${ctx.sizes.consumerMessagesAtOne} at concurrency 1)`,
  );
  const { url, handle } = await freshDatabase(ctx.stack.postgres.adminUrl, "bench_consumer");
  await handle.close(5_000);
  try {
    for (const concurrency of ctx.sizes.concurrencies) {
      const runs: Record<ConsumerImpl, ConsumerRun[]> = {
        ours: [],
        "ours-batch": [],
        "sqs-consumer": [],
        "sqs-consumer-batch": [],
        "bare-sdk": [],
      };
      for (let run = 0; run < ctx.runs; run += 1) {
        // The bare SDK first: each consumer run of the round is told its CPU above it.
        const bareSdk = await consumerRun(ctx, url, "bare-sdk", concurrency);
        runs["bare-sdk"].push(bareSdk);
        for (const impl of ["ours", "ours-batch", "sqs-consumer", "sqs-consumer-batch"] as const) {
          runs[impl].push(await consumerRun(ctx, url, impl, concurrency, { bareSdk }));
        }
      }
      const aboveBareSdk = (impl: ConsumerImpl) =>
        summarize(runs[impl].map((r) => r.cpuMicrosAboveBareSdk ?? Number.NaN));
      const bareSdkCpu = summarize(runs["bare-sdk"].map((r) => r.cpuMicrosPerMessage)).median;
      ctx.log(
        `  c=${concurrency} CPU µs/msg above the bare SDK (${bareSdkCpu} µs/msg), medians: ours ${aboveBareSdk("ours").median}, ours with a batch handler ${aboveBareSdk("ours-batch").median}, sqs-consumer ${aboveBareSdk("sqs-consumer").median}, sqs-consumer-batch ${aboveBareSdk("sqs-consumer-batch").median}`,
      );
      const shape = sqsConsumerShape(concurrency);
      const scenario = `3 consumer, concurrency ${concurrency} (ours ${ourPollers(concurrency)} poller(s); sqs-consumer ${shape.instances}× batch ${shape.batchSize})`;
      for (const peer of ["sqs-consumer", "sqs-consumer-batch"] as const) {
        const name =
          peer === "sqs-consumer" ? "sqs-consumer handleMessage" : "sqs-consumer handleMessageBatch";
        ctx.rows.push(
          {
            scenario,
            metric: "CPU µs/message",
            better: "lower",
            ours: summarize(runs.ours.map((r) => r.cpuMicrosPerMessage)),
            peer: { name, summary: summarize(runs[peer].map((r) => r.cpuMicrosPerMessage)) },
          },
          {
            scenario,
            metric: "CPU µs/message above the bare SDK",
            better: "lower",
            ours: aboveBareSdk("ours"),
            peer: { name, summary: aboveBareSdk(peer) },
            note: `what each library and its handler add to the bare SDK's ${bareSdkCpu} µs/message (receive ${Math.min(MAX_BATCH_ENTRIES, concurrency)} + DeleteMessageBatch, no Postgres), run by run`,
          },
          {
            scenario,
            metric: "messages/s",
            better: "higher",
            ours: summarize(runs.ours.map((r) => r.messagesPerSecond)),
            peer: { name, summary: summarize(runs[peer].map((r) => r.messagesPerSecond)) },
          },
          {
            scenario,
            metric: "consumer peak RSS MiB",
            better: "lower",
            ours: summarize(runs.ours.map((r) => r.maxRssMiB)),
            peer: { name, summary: summarize(runs[peer].map((r) => r.maxRssMiB)) },
          },
        );
      }
      const perMessage = "ours, one message per transaction";
      const postgresMicros = (impl: ConsumerImpl) =>
        summarize(runs[impl].map((r) => tickedCpuMicrosPerItem(r.postgresCpuSeconds, r.messages)));
      ctx.rows.push(
        {
          scenario,
          metric: "CPU µs/message, batch handler",
          better: "lower",
          ours: summarize(runs["ours-batch"].map((r) => r.cpuMicrosPerMessage)),
          peer: { name: perMessage, summary: summarize(runs.ours.map((r) => r.cpuMicrosPerMessage)) },
          note: "defineBatchHandler: up to 10 events of a receive, their inbox rows and effects in one transaction",
        },
        {
          scenario,
          metric: "CPU µs/message above the bare SDK, batch handler",
          better: "lower",
          ours: aboveBareSdk("ours-batch"),
          peer: { name: "sqs-consumer handleMessageBatch", summary: aboveBareSdk("sqs-consumer-batch") },
        },
        {
          scenario,
          metric: "Postgres CPU µs/message, batch handler",
          better: "lower",
          ours: postgresMicros("ours-batch"),
          peer: { name: perMessage, summary: postgresMicros("ours") },
          ...(Number.isFinite(postgresMicros("ours-batch").median) &&
          Number.isFinite(postgresMicros("ours").median)
            ? {}
            : { note: BELOW_RESOLUTION }),
        },
        {
          scenario,
          metric: "messages/s, batch handler",
          better: "higher",
          ours: summarize(runs["ours-batch"].map((r) => r.messagesPerSecond)),
          peer: {
            name: "sqs-consumer handleMessageBatch",
            summary: summarize(runs["sqs-consumer-batch"].map((r) => r.messagesPerSecond)),
          },
        },
      );
    }
  } finally {
    await dropDatabase(ctx.stack.postgres.adminUrl, url);
  }
}
