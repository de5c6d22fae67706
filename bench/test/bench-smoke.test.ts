import { type LocalStack, startStack } from "@outbox/devstack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBench } from "../src/bench.js";
import { SCENARIOS, type ScenarioName, SMOKE } from "../src/context.js";
import { BELOW_RESOLUTION } from "../src/measure.js";
import { markdownTable } from "../src/report.js";

// What the table must say about how a scenario ran: the configuration each tuned peer was given,
// the bound a scenario is measured against.
const TABLE_SAYS: Partial<Record<ScenarioName, RegExp[]>> = {
  relay: [
    /pto polling \(batch \d+, parallel\)/,
    /pto replication \((mutex|full concurrency)/,
    /controller picked by/,
  ],
  consumer: [
    /CPU µs\/message above the bare SDK/,
    /the bare SDK's -?\d+ µs\/message \(receive \d+ \+ DeleteMessageBatch/,
    /CPU µs\/message, batch handler .*\| ours, one message per transaction \|/,
    /Postgres CPU µs\/message, batch handler/,
  ],
  "relay-latency-sns": [
    /Little's-law bound: \d+ in flight × 10 \/ 20 ms/,
    /\d+ % of the bound \d+ events\/s/,
    /bare SDK: \d+ PublishBatch loops × 10, no Postgres/,
    /the relay's CPU per event over the bare SDK's/,
  ],
  enqueue: [
    /enqueue → commit, 16 producers on 4 keys \| transactions\/s/,
    /the same, without the key lock \(before 0014\)/,
  ],
  growth: [
    /events\/s at 2 000 published rows/,
    /claim p99 ms: growth 0 → 2 000 published rows/,
    /EXPLAIN buffers per claim \(shared hit \+ read\) at 2 000 published rows/,
    /seconds to delete a day at 2 000 published rows/,
    /WAL bytes per row deleted at 2 000 published rows/,
    /relay events\/s while the retention deletes a day at 2 000 published rows \(higher is better\) \| \d+/,
    /consumer CPU µs\/message: growth 0 → 2 000 inbox rows/,
    /goal ≤ 1\.2×: (met|missed)/,
  ],
};

// Scenarios whose rows may stand alone, without a peer: growth measures the peers only where they
// apply cheaply (the consumer, on the same inbox), so its relay and retention rows have none.
const PEERLESS_ROWS: ReadonlySet<ScenarioName> = new Set(["growth"]);

// Smoke runs of every `pnpm bench` scenario with tiny sizes, so the harness cannot rot. They check
// that each scenario runs end to end and reports figures — never how fast anything is.
// Its own embedded stack: the replication listener needs wal_level=logical.
describe("pnpm bench (smoke)", () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startStack({ backend: "embedded", postgresSettings: { wal_level: "logical" } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  for (const scenario of SCENARIOS) {
    it(`runs the ${scenario} scenario and reports every pair`, { timeout: 240_000 }, async () => {
      const lines: string[] = [];
      const report = await runBench({
        mode: "smoke",
        sizes: SMOKE,
        runs: 1,
        scenarios: [scenario],
        stack,
        log: (line) => lines.push(line),
      });
      expect(report.rows.length).toBeGreaterThan(0);
      for (const row of report.rows) {
        expect(row.ours.runs.length).toBe(1);
        if (row.peer || !PEERLESS_ROWS.has(scenario)) expect(row.peer?.summary.runs.length).toBe(1);
      }
      expect(Object.keys(report.raw).length).toBeGreaterThan(0);
      expect(report.versions["pg-transactional-outbox"]).toMatch(/^\d/);
      expect(report.versions["sqs-consumer"]).toMatch(/^14\./);
      // A figure is a number, or says that the run was too short for the clock it is read from
      // (Postgres CPU comes in 10 ms ticks: a smoke run on a fast machine costs it 0 or 1 of them).
      // Never a number made of too few ticks, whatever the machine's speed.
      for (const row of report.rows) {
        if (!Number.isFinite(row.ours.median)) expect(row.note, row.metric).toContain(BELOW_RESOLUTION);
      }
      if (scenario === "growth") {
        // Every part of it in the raw figures.
        expect(Object.keys(report.raw).sort()).toEqual([
          "growth-consumer",
          "growth-relay",
          "growth-relay-control",
          "growth-retention",
          "growth-retention-under-load",
        ]);
      }
      const table = markdownTable(report.rows);
      expect(table).toContain("| scenario |");
      for (const says of TABLE_SAYS[scenario] ?? []) expect(table).toMatch(says);
    });
  }
});
