/**
 * Scenario 9 (what per-key order costs the producers): `enqueue` in its own transaction, BEGIN to
 * COMMIT answered, ours (migration 0014: a keyed row takes its key's lock and holds it to the commit)
 * beside the same schema without that trigger (the outbox before 0014, whose keys' order could break
 * under concurrent producers). One producer (the lock's own price), and 16 producers on 4 keys (the
 * price of taking turns: a key's commits no longer overlap). Unkeyed events take no lock: the
 * one-producer unkeyed row shows they do not pay for it.
 */
import { enqueue, type NewEvent } from "@outbox/client";
import type { DatabaseHandle } from "@outbox/shared";
import { sql } from "kysely";
import type { BenchContext } from "../context.js";
import { BODY, dropDatabase, freshDatabase, openDatabase, TRACEPARENT } from "../fixtures.js";
import { percentile, postgresCpuSeconds, summarize } from "../measure.js";

type Side = "ours" | "before 0014";
const PEER_NAME = "the same, without the key lock (before 0014)";
const CONTENDED_PRODUCERS = 16;
const CONTENDED_KEYS = 4;
/** Each phase runs in this many slices per side, alternating which side goes first. */
const SLICES = 4;

interface Figures {
  readonly transactionsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The Postgres server's CPU (every process of it) per transaction: less swayed by load than time. */
  readonly postgresCpuUs: number;
}

function event(n: number, orderingKey: string | null): NewEvent {
  return {
    topic: "bench",
    eventType: "bench.happened",
    payload: { n, body: BODY },
    orderingKey,
    headers: { traceparent: TRACEPARENT },
  };
}

/** Latencies (ms), time and Postgres CPU spent, of one side, gathered over the slices of one phase. */
interface Tally {
  readonly latencies: number[];
  seconds: number;
  cpuSeconds: number;
}

/** `producers` loops of `each` transactions of one event each, every producer on its own connection. */
async function produce(
  postmasterPid: number,
  handle: DatabaseHandle,
  tally: Tally,
  producers: number,
  each: number,
  key: (producer: number, n: number) => string | null,
): Promise<void> {
  const started = performance.now();
  const cpuBefore = postgresCpuSeconds(postmasterPid);
  await Promise.all(
    Array.from({ length: producers }, async (_, producer) => {
      for (let n = 0; n < each; n += 1) {
        const begun = performance.now();
        await handle.db.transaction().execute((trx) => enqueue(trx, [event(n, key(producer, n))]));
        tally.latencies.push(performance.now() - begun);
      }
    }),
  );
  tally.seconds += (performance.now() - started) / 1_000;
  tally.cpuSeconds += postgresCpuSeconds(postmasterPid) - cpuBefore;
}

function figures(tally: Tally): Figures {
  const sorted = tally.latencies.toSorted((a, b) => a - b);
  return {
    transactionsPerSecond: Math.round(sorted.length / tally.seconds),
    p50Ms: Number(percentile(sorted, 50).toFixed(2)),
    p99Ms: Number(percentile(sorted, 99).toFixed(2)),
    postgresCpuUs: Math.round((tally.cpuSeconds * 1e6) / sorted.length),
  };
}

interface Run {
  readonly keyed: Figures;
  readonly unkeyed: Figures;
  readonly contended: Figures;
}

type Phase = (handle: DatabaseHandle, tally: Tally, slice: number) => Promise<void>;

/** Both sides through `phase` in slices, alternating which goes first: drift falls on both alike. */
async function sliced(handles: Record<Side, DatabaseHandle>, phase: Phase): Promise<Record<Side, Figures>> {
  const tallies: Record<Side, Tally> = {
    ours: { latencies: [], seconds: 0, cpuSeconds: 0 },
    "before 0014": { latencies: [], seconds: 0, cpuSeconds: 0 },
  };
  for (let slice = 0; slice < SLICES; slice += 1) {
    const order: Side[] = slice % 2 === 0 ? ["ours", "before 0014"] : ["before 0014", "ours"];
    for (const side of order) await phase(handles[side], tallies[side], slice);
  }
  return { ours: figures(tallies.ours), "before 0014": figures(tallies["before 0014"]) };
}

/** A fresh outbox database; before 0014's has the key-lock trigger dropped. */
async function sideDatabase(ctx: BenchContext, side: Side): Promise<{ url: string; handle: DatabaseHandle }> {
  const { url, handle } = await freshDatabase(ctx.stack.postgres.adminUrl, "bench_enqueue");
  try {
    if (side === "before 0014") await sql`DROP TRIGGER outbox_key_turn ON outbox`.execute(handle.db);
  } finally {
    await handle.close(5_000);
  }
  return { url, handle: openDatabase(url, "bench-enqueue", CONTENDED_PRODUCERS) };
}

async function run(ctx: BenchContext): Promise<Record<Side, Run>> {
  const ours = await sideDatabase(ctx, "ours");
  const before = await sideDatabase(ctx, "before 0014");
  try {
    const handles = { ours: ours.handle, "before 0014": before.handle };
    const each = Math.ceil(ctx.sizes.enqueueTransactions / SLICES);
    // A key per transaction: one producer never waits for a lock, so this is the lock's own price.
    const keyed = await sliced(handles, (handle, tally, slice) =>
      produce(ctx.postmasterPid, handle, tally, 1, each, (_, n) => `key-${slice}-${n}`),
    );
    const unkeyed = await sliced(handles, (handle, tally) =>
      produce(ctx.postmasterPid, handle, tally, 1, each, () => null),
    );
    const contended = await sliced(handles, (handle, tally) =>
      produce(
        ctx.postmasterPid,
        handle,
        tally,
        CONTENDED_PRODUCERS,
        Math.ceil(ctx.sizes.enqueueContendedPerProducer / SLICES),
        (producer) => `key-${producer % CONTENDED_KEYS}`,
      ),
    );
    const result = {} as Record<Side, Run>;
    for (const side of ["ours", "before 0014"] as const) {
      result[side] = { keyed: keyed[side], unkeyed: unkeyed[side], contended: contended[side] };
      ctx.record("enqueue", { side, ...result[side] });
      ctx.log(
        `  enqueue ${side.padEnd(11)} 1 producer keyed p50 ${keyed[side].p50Ms} ms, unkeyed p50 ${unkeyed[side].p50Ms} ms; ` +
          `${CONTENDED_PRODUCERS} producers on ${CONTENDED_KEYS} keys ${contended[side].transactionsPerSecond} tx/s, p99 ${contended[side].p99Ms} ms`,
      );
    }
    return result;
  } finally {
    await Promise.all([ours.handle.close(5_000), before.handle.close(5_000)]);
    await dropDatabase(ctx.stack.postgres.adminUrl, ours.url);
    await dropDatabase(ctx.stack.postgres.adminUrl, before.url);
  }
}

export async function enqueueCost(ctx: BenchContext): Promise<void> {
  ctx.log(
    `enqueue → commit: ${ctx.sizes.enqueueTransactions} transactions of one event, 1 producer; then ${CONTENDED_PRODUCERS} producers on ${CONTENDED_KEYS} keys, ${ctx.sizes.enqueueContendedPerProducer} each; ${SLICES} slices per side, alternating`,
  );
  const runs: Record<Side, Run[]> = { ours: [], "before 0014": [] };
  for (let at = 0; at < ctx.runs; at += 1) {
    const both = await run(ctx);
    runs.ours.push(both.ours);
    runs["before 0014"].push(both["before 0014"]);
  }
  const row = (scenario: string, metric: string, pick: (r: Run) => number, better: "higher" | "lower") =>
    ctx.rows.push({
      scenario,
      metric,
      better,
      ours: summarize(runs.ours.map(pick)),
      peer: { name: PEER_NAME, summary: summarize(runs["before 0014"].map(pick)) },
    });
  const one = "9 enqueue → commit, 1 producer";
  row(one, "keyed p50 ms", (r) => r.keyed.p50Ms, "lower");
  row(one, "keyed p99 ms", (r) => r.keyed.p99Ms, "lower");
  row(one, "keyed Postgres CPU µs/transaction", (r) => r.keyed.postgresCpuUs, "lower");
  row(one, "unkeyed p50 ms (no lock taken)", (r) => r.unkeyed.p50Ms, "lower");
  row(one, "unkeyed Postgres CPU µs/transaction", (r) => r.unkeyed.postgresCpuUs, "lower");
  const contended = `9 enqueue → commit, ${CONTENDED_PRODUCERS} producers on ${CONTENDED_KEYS} keys`;
  row(contended, "transactions/s", (r) => r.contended.transactionsPerSecond, "higher");
  row(contended, "p50 ms", (r) => r.contended.p50Ms, "lower");
  row(contended, "p99 ms", (r) => r.contended.p99Ms, "lower");
}
