/**
 * Scenario 4 (stop cost under load): SIGTERM → exit, then a restart drains the rest; we count what
 * was sent twice. Ours runs as the real daemons (apps/relay and apps/consumer src/main.ts); each peer is stopped the way
 * its README shows.
 */
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { awsEnvironment, bootstrapResources, statsClientFor } from "@outbox/devstack";
import { EXAMPLE_HANDLERS_MODULE } from "@outbox/example-handlers/modules";
import { MeasuredChild, runJob } from "../child.js";
import type { BenchContext } from "../context.js";
import { READY_TIMEOUT_MS, startBenchDaemon } from "../daemons.js";
import { countRows, dropDatabase, freshDatabase } from "../fixtures.js";
import type { ConsumerImpl, Job, RelayImpl, RelayJob } from "../jobs.js";
import { summarize, wallMs } from "../measure.js";
import { PTO_TABLE } from "../pto-fixtures.js";
import { preparedRelayDatabase } from "../relay-setup.js";
import { consumerJob, filledQueue, setupSqs } from "./consumer.js";

export interface StopRun {
  subject: string;
  exitMs: number;
  exitCode: number | null;
  killed: boolean;
  /** Relay: events published twice (SNS emulator `republished`). Consumer: inbox duplicates. */
  redelivered: number;
  /** Events / messages left for the restart. */
  leftForRestart: number;
  /**
   * Relay: events the emulator had received that were still unmarked when the process was gone,
   * which is what any restart sends a second time. Counted without waiting for the restart, so it
   * holds however long a peer's restart would take to reach them.
   */
  unmarkedPublished?: number;
  restartSeconds: number;
}

/** SIGTERM, then the time until the process is gone (SIGKILL after `killAfterMs`). */
async function terminate(
  child: ChildProcess,
  killAfterMs: number,
): Promise<{ exitMs: number; exitCode: number | null; killed: boolean }> {
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const at = wallMs();
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
  const exitCode = await exited;
  clearTimeout(timer);
  const exitMs = Math.round(wallMs() - at);
  return { exitMs, exitCode, killed: exitMs >= killAfterMs };
}

/**
 * Starts the subject under load — our daemon, or a peer's job in a measured child — lets it work for
 * `stopAfterMs`, then stops it with SIGTERM (see `terminate`).
 */
async function stopWhileBusy(
  ctx: BenchContext,
  subject: { daemon: string; env: Record<string, string> } | { peer: Job },
): Promise<{ exitMs: number; exitCode: number | null; killed: boolean }> {
  let child: ChildProcess;
  if ("daemon" in subject) {
    const started = startBenchDaemon(subject.daemon, subject.env);
    await started.waitForLog("started", {}, READY_TIMEOUT_MS);
    child = started.child;
  } else {
    const peer = new MeasuredChild(subject.peer);
    await peer.ready;
    peer.go();
    child = peer.process;
  }
  await new Promise((resolve) => setTimeout(resolve, ctx.sizes.stopAfterMs));
  return terminate(child, ctx.sizes.stopKillAfterMs);
}

async function relayStopRun(ctx: BenchContext, impl: RelayImpl): Promise<StopRun> {
  const events = ctx.sizes.stopEvents;
  const { url, pto } = await preparedRelayDatabase(ctx, impl, events);
  const { topicArn } = await bootstrapResources(ctx.stack.aws, {
    name: `bench-stop-${randomUUID().slice(0, 8)}`,
    rawDelivery: true,
  });
  const job: RelayJob = {
    kind: "relay",
    impl,
    sink: "sns",
    url,
    aws: ctx.stack.aws,
    topicArn,
    batchSize: impl === "ours" ? ctx.sizes.ourBatchSize : 50,
    expected: null,
    capMs: 600_000,
    listen: true,
    recordTimes: false,
    pollIntervalMs: impl === "ours" ? 1_000 : 500,
    poolMax: 20,
    pto,
  };
  try {
    // A peer's README outbox listener has no signal handler: SIGTERM's default action ends it.
    const stopped = await stopWhileBusy(
      ctx,
      impl === "ours"
        ? {
            daemon: "apps/relay/src/main.ts",
            env: {
              DATABASE_URL: url,
              ...awsEnvironment(ctx.stack.aws),
              RELAY_TOPIC_ARNS: `bench=${topicArn}`,
              RELAY_BATCH_SIZE: String(ctx.sizes.ourBatchSize),
              RELAY_RETENTION_MS: "0",
            },
          }
        : { peer: job },
    );
    const left = await countRows(
      url,
      impl === "ours"
        ? "SELECT count(*) AS n FROM outbox WHERE published_at IS NULL"
        : `SELECT count(*) AS n FROM ${PTO_TABLE} WHERE processed_at IS NULL`,
    );
    const statsClient = statsClientFor(ctx.stack);
    const atExit = await statsClient?.topic(topicArn);
    const unmarkedPublished = (atExit?.distinctEventIds ?? Number.NaN) - (events - left);
    // The restart: the same subject as a library, until every remaining row is sent or the cap.
    const started = wallMs();
    const restart =
      left > 0 ? await runJob({ ...job, expected: left, capMs: ctx.sizes.stopRestartCapMs }) : undefined;
    const restartSeconds = (wallMs() - started) / 1_000;
    const stats = await statsClient?.topic(topicArn);
    const run: StopRun = {
      subject: impl === "ours" ? "our relay (daemon)" : impl,
      ...stopped,
      redelivered: stats?.republished ?? Number.NaN,
      leftForRestart: left,
      unmarkedPublished,
      restartSeconds: Number(restartSeconds.toFixed(2)),
    };
    ctx.record("stop", {
      ...run,
      restartCapped: restart?.capped ?? false,
      published: stats?.published,
      distinct: stats?.distinctEventIds,
    });
    ctx.log(
      `  stop ${run.subject}: exit ${run.exitMs} ms (code ${run.exitCode}${run.killed ? ", SIGKILLed" : ""}), ${left} left, ${unmarkedPublished} published but unmarked at the exit, re-sent after restart: ${run.redelivered}${restart?.capped ? ` (restart stopped at ${ctx.sizes.stopRestartCapMs / 1_000} s)` : ""}`,
    );
    return run;
  } finally {
    await dropDatabase(ctx.stack.postgres.adminUrl, url);
  }
}

async function queueEmpty(ctx: BenchContext, queueUrl: string): Promise<boolean> {
  const sqs = setupSqs(ctx);
  try {
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
      }),
    );
    return (
      Number(Attributes.ApproximateNumberOfMessages ?? 1) === 0 &&
      Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 1) === 0
    );
  } finally {
    sqs.destroy();
  }
}

async function consumerStopRun(ctx: BenchContext, impl: ConsumerImpl): Promise<StopRun> {
  const messages = ctx.sizes.stopMessages;
  const { url, handle } = await freshDatabase(ctx.stack.postgres.adminUrl, "bench_stop");
  await handle.close(5_000);
  // A short visibility timeout, so what a stop abandons comes back within the run.
  const queueUrl = await filledQueue(ctx, messages, 5);
  const job = consumerJob(ctx, impl, url, queueUrl, 20, null);
  try {
    const stopped = await stopWhileBusy(
      ctx,
      impl === "ours"
        ? {
            daemon: "apps/consumer/src/main.ts",
            env: {
              DATABASE_URL: url,
              ...awsEnvironment(ctx.stack.aws),
              CONSUMER_QUEUE_URL: queueUrl,
              CONSUMER_HANDLERS_MODULE: EXAMPLE_HANDLERS_MODULE,
              CONSUMER_NAME: job.name,
              CONSUMER_POLLERS: String(job.pollers),
              CONSUMER_CONCURRENCY: String(job.concurrency),
            },
          }
        : { peer: { ...job, readmeShutdown: true } },
    );
    const inboxQuery = `SELECT count(*) AS n FROM inbox WHERE consumer = '${job.name}'`;
    const left = messages - (await countRows(url, inboxQuery));
    // Restart: the same consumer until every message is in the inbox and the queue is empty
    // (what a stop abandoned is visible again after the 5 s visibility timeout).
    const started = wallMs();
    const restart = new MeasuredChild(job);
    let duplicates = 0;
    try {
      await restart.ready;
      restart.go();
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        if ((await countRows(url, inboxQuery)) >= messages && (await queueEmpty(ctx, queueUrl))) break;
      }
      restart.finish();
      duplicates = Number((await restart.result).duplicates ?? 0);
    } finally {
      restart.kill("SIGKILL");
    }
    const run: StopRun = {
      subject: impl === "ours" ? "our consumer (daemon)" : `${impl} (README shutdown)`,
      ...stopped,
      redelivered: duplicates,
      leftForRestart: left,
      restartSeconds: Number(((wallMs() - started) / 1_000).toFixed(2)),
    };
    ctx.record("stop", { ...run });
    ctx.log(
      `  stop ${run.subject}: exit ${run.exitMs} ms (code ${run.exitCode}${run.killed ? ", SIGKILLed" : ""}), ${left} left, inbox duplicates after restart: ${duplicates}`,
    );
    return run;
  } finally {
    await dropDatabase(ctx.stack.postgres.adminUrl, url);
  }
}

function unmarked(runs: readonly StopRun[]): number {
  return summarize(runs.map((r) => r.unmarkedPublished ?? Number.NaN)).median;
}

export async function stopCost(ctx: BenchContext): Promise<void> {
  ctx.log(`stop cost under load: SIGTERM after ${ctx.sizes.stopAfterMs} ms, then a restart drains the rest`);
  const relay: Record<RelayImpl, StopRun[]> = { ours: [], "pto-polling": [], "pto-replication": [] };
  const consumer: Record<"ours" | "sqs-consumer", StopRun[]> = { ours: [], "sqs-consumer": [] };
  for (let run = 0; run < ctx.runs; run += 1) {
    for (const impl of ["ours", "pto-polling", "pto-replication"] as const)
      relay[impl].push(await relayStopRun(ctx, impl));
    for (const impl of ["ours", "sqs-consumer"] as const)
      consumer[impl].push(await consumerStopRun(ctx, impl));
  }
  for (const peer of ["pto-polling", "pto-replication"] as const) {
    const scenario = `4 relay stop (${ctx.sizes.stopEvents} backlog, local SNS)`;
    ctx.rows.push(
      {
        scenario,
        metric: "SIGTERM → exit ms",
        better: "lower",
        ours: summarize(relay.ours.map((r) => r.exitMs)),
        peer: { name: peer, summary: summarize(relay[peer].map((r) => r.exitMs)) },
      },
      {
        scenario,
        metric: "events re-sent after restart",
        better: "lower",
        ours: summarize(relay.ours.map((r) => r.redelivered)),
        peer: { name: peer, summary: summarize(relay[peer].map((r) => r.redelivered)) },
        note: `restart stopped at ${ctx.sizes.stopRestartCapMs / 1_000} s at most; published but unmarked at the exit (what any restart re-sends): ours ${unmarked(relay.ours)}, peer ${unmarked(relay[peer])}`,
      },
    );
  }
  const scenario = `4 consumer stop (${ctx.sizes.stopMessages} queued, concurrency 20)`;
  ctx.rows.push(
    {
      scenario,
      metric: "SIGTERM → exit ms",
      better: "lower",
      ours: summarize(consumer.ours.map((r) => r.exitMs)),
      peer: {
        name: "sqs-consumer (README shutdown)",
        summary: summarize(consumer["sqs-consumer"].map((r) => r.exitMs)),
      },
    },
    {
      scenario,
      metric: "inbox duplicates after restart",
      better: "lower",
      ours: summarize(consumer.ours.map((r) => r.redelivered)),
      peer: {
        name: "sqs-consumer (README shutdown)",
        summary: summarize(consumer["sqs-consumer"].map((r) => r.redelivered)),
      },
    },
  );
}
