/**
 * Commit → publish latency of our relay alone, as `pnpm bench`'s latency scenario measures it (one
 * event per transaction from up to 8 producers in flight, NOTIFY-woken relay in a measured child),
 * repeated, with the load average beside each figure.
 *
 *   pnpm exec tsx --conditions=development bench/tools/relay-latency.ts [rate…]
 *
 * BENCH_SECONDS (default 10), BENCH_RUNS (default 3), BENCH_TRACE=1 runs the relay in this process
 * and prints every batch slower than 20 ms and every gap between batches over 50 ms (for stalls),
 * BENCH_CPU_PROF=dir profiles the child.
 */
import os from "node:os";
import { performance } from "node:perf_hooks";
import { enqueue } from "@outbox/client";
import { bootstrapResources, startStack } from "@outbox/devstack";
import { createRelay, nullPublisher } from "@outbox/relay";
import { createDatabase } from "@outbox/shared";
import { MeasuredChild } from "../src/child.js";
import { benchEvent, dropDatabase, freshDatabase } from "../src/fixtures.js";
import type { RelayJob } from "../src/jobs.js";
import { percentile, produceAtRate, wallMs } from "../src/measure.js";

const rates = process.argv.slice(2).map(Number);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TRACE = process.env.BENCH_TRACE === "1";

const stack = await startStack({ backend: "embedded" });
try {
  const { topicArn } = await bootstrapResources(stack.aws, { name: "latency", rawDelivery: true });
  for (const rate of rates.length > 0 ? rates : [500, 2_000]) {
    for (let run = 0; run < RUNS; run += 1) {
      const total = Math.round(rate * SECONDS);
      const { url, handle: setup } = await freshDatabase(stack.postgres.adminUrl);
      await setup.close(5_000);
      const producer = createDatabase({
        url,
        service: "bench-producer",
        poolMax: 8,
        statementTimeoutMs: 30_000,
        idleInTransactionTimeoutMs: 30_000,
      });
      await Promise.all(Array.from({ length: 8 }, () => producer.pool.query("SELECT 1")));
      const committedAt = new Map<string, number>();
      const loadBefore = os.loadavg()[0] ?? 0;
      let times: Map<string, number>;
      let cpuSeconds = Number.NaN;
      let note = "";
      let finish: () => Promise<void>;
      if (TRACE) {
        const relayDb = createDatabase({
          url,
          service: "bench-relay",
          poolMax: 20,
          statementTimeoutMs: 30_000,
          idleInTransactionTimeoutMs: 30_000,
        });
        times = new Map();
        const published = times;
        // Counts the relay's statements: claims (and the empty ones), marks.
        const counts = { claims: 0, empty: 0, other: 0 };
        const counted = relayDb.db.withPlugin({
          transformQuery: (args) => args.node,
          transformResult: async (args) => {
            const claimed = args.result.rows.length;
            if (args.result.rows[0] && "payload" in args.result.rows[0]) counts.claims += 1;
            else if (claimed === 0 && args.result.numAffectedRows === 0n) counts.empty += 1;
            else counts.other += 1;
            return args.result;
          },
        });
        const relay = createRelay({
          db: counted,
          publisher: {
            async publishBatch(request, signal) {
              const result = await nullPublisher.publishBatch(request, signal);
              const at = wallMs();
              for (const entry of request.entries) published.set(entry.id, at);
              return result;
            },
          },
          listenUrl: url,
          topicArns: { bench: topicArn },
          batchSize: 100,
          publishConcurrency: 16,
          pollIntervalMs: 1_000,
        });
        let lastEnd = performance.now();
        relay.on("batch", (report) => {
          const end = performance.now();
          const gap = end - report.durationMs - lastEnd;
          if (report.durationMs > 20 || gap > 50)
            console.log(
              `  batch of ${report.claimed} took ${report.durationMs.toFixed(1)} ms after a gap of ${gap.toFixed(1)} ms`,
            );
          lastEnd = end;
        });
        relay.on("batchFailed", (error) => console.log("  batch failed", error));
        relay.start();
        await new Promise((resolve) => setTimeout(resolve, 300));
        finish = async () => {
          const deadline = performance.now() + 15_000;
          while (published.size < total && performance.now() < deadline)
            await new Promise((resolve) => setTimeout(resolve, 20));
          await relay.drain();
          console.log(`  statements: ${JSON.stringify(counts)}`);
          await relayDb.close(5_000);
        };
      } else {
        const child = new MeasuredChild(
          {
            kind: "relay",
            impl: "ours",
            sink: "null",
            url,
            aws: stack.aws,
            topicArn,
            batchSize: 100,
            expected: total,
            capMs: SECONDS * 1_000 + 15_000,
            listen: true,
            recordTimes: true,
            pollIntervalMs: 1_000,
            poolMax: 20,
          } satisfies RelayJob,
          process.env.BENCH_CPU_PROF ? { cpuProfDir: process.env.BENCH_CPU_PROF } : {},
        );
        await child.ready;
        child.go();
        await new Promise((resolve) => setTimeout(resolve, 300));
        times = new Map();
        const filled = times;
        finish = async () => {
          const result = await child.result;
          cpuSeconds = result.cpuSeconds;
          if (result.capped) note = `, capped after ${result.seconds.toFixed(1)} s`;
          for (const [id, at] of (result.times as [string, number][] | undefined) ?? []) filled.set(id, at);
          child.kill("SIGKILL");
        };
      }
      const producedIn = await produceAtRate(rate, total, async (n) => {
        const [id] = await enqueue(producer.db, [benchEvent(n)]);
        committedAt.set(id ?? "", wallMs());
      });
      await finish();
      const latencies = [...committedAt]
        .map(([id, at]) => (times.get(id) ?? Number.NaN) - at)
        .filter(Number.isFinite)
        .sort((a, b) => a - b);
      console.log(
        `latency ${rate}/s run ${run + 1}: ${latencies.length}/${total} events, p50 ${percentile(latencies, 50).toFixed(2)} ms, p99 ${percentile(latencies, 99).toFixed(2)} ms, max ${percentile(latencies, 100).toFixed(2)} ms, relay CPU ${((cpuSeconds / Math.max(1, latencies.length)) * 1e6).toFixed(0)} µs/event, produced in ${producedIn.toFixed(1)} s${note}, load ${loadBefore.toFixed(2)} → ${(os.loadavg()[0] ?? 0).toFixed(2)}`,
      );
      await producer.close(5_000);
      await dropDatabase(stack.postgres.adminUrl, url);
    }
  }
} finally {
  await stack.stop();
}
