import { type LocalStack, startStack } from "@outbox/devstack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBench } from "../src/bench.js";
import { SCENARIOS, type ScenarioName, SMOKE } from "../src/context.js";
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
  ],
  "relay-latency-sns": [
    /Little's-law bound: \d+ in flight × 10 \/ 20 ms/,
    /\d+ % of the bound \d+ events\/s/,
    /bare SDK: \d+ PublishBatch loops × 10, no Postgres/,
    /the relay's CPU per event over the bare SDK's/,
  ],
};

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
        expect(row.peer?.summary.runs.length).toBe(1);
      }
      expect(Object.keys(report.raw).length).toBeGreaterThan(0);
      expect(report.versions["pg-transactional-outbox"]).toMatch(/^\d/);
      expect(report.versions["sqs-consumer"]).toMatch(/^14\./);
      const table = markdownTable(report.rows);
      expect(table).toContain("| scenario |");
      for (const says of TABLE_SAYS[scenario] ?? []) expect(table).toMatch(says);
    });
  }
});
