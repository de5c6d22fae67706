/**
 * `pnpm bench`: measures our relay and consumer beside pg-transactional-outbox and sqs-consumer on
 * one embedded stack (Postgres with wal_level=logical, SQS, the SNS emulator); options in `usage`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { EXIT_OK } from "@outbox/shared";
import { parseCommandLine, usageError, wholeNumberOption } from "@outbox/shared/command-line";
import { FULL, QUICK, SCENARIOS, type ScenarioName } from "./context.js";
import { waitForLowLoad } from "./measure.js";
import { markdownTable } from "./report.js";

const usage = `usage: pnpm bench [--quick] [--runs N] [--only SCENARIO,…] [--wait-for-load]

Measures our relay and consumer beside pg-transactional-outbox and sqs-consumer on one embedded
stack: progress on stderr, the Markdown table on stdout, every raw figure in
reports/bench-<time>.json (docs/benchmarks.md).

  --quick          small sizes and one run each (under 5 min) instead of the full run (under 45 min
                   on 2 cores, growth's 5 M-row fills included: docs/benchmarks.md)
  --runs N         runs of each scenario (default 3; 1 with --quick)
  --only LIST      comma-separated scenarios: ${SCENARIOS.join(", ")} (default: all)
  --wait-for-load  first wait (up to 10 min) for the 1-min load average to drop below 1.5`;

// The command line first, before the stack and the peers load: `--help` and a usage error answer at once.
const { values, positionals } = parseCommandLine(usage, {
  quick: { type: "boolean", default: false },
  runs: { type: "string" },
  only: { type: "string" },
  "wait-for-load": { type: "boolean", default: false },
});
if (positionals.length > 0) usageError(usage, `unexpected argument: ${positionals.join(" ")}`);
const quick = values.quick === true;
const runs = wholeNumberOption(usage, "runs", values.runs, quick ? 1 : 3);
const isScenario = (name: string): name is ScenarioName => (SCENARIOS as readonly string[]).includes(name);
const only = typeof values.only === "string" ? values.only.split(",").map((name) => name.trim()) : undefined;
const unknown = (only ?? []).filter((name) => !isScenario(name));
if (unknown.length > 0) {
  usageError(usage, `unknown scenario: ${unknown.join(", ")}; choose from ${SCENARIOS.join(", ")}`);
}
const scenarios = only?.filter(isScenario) ?? [...SCENARIOS];

const { runBench } = await import("./bench.js");
if (values["wait-for-load"]) {
  const load = await waitForLowLoad(1.5, 600_000, (l) =>
    process.stderr.write(`waiting for the load average (${l.toFixed(2)}) to drop below 1.5…\n`),
  );
  process.stderr.write(`load average ${load.toFixed(2)}, starting\n`);
}
const report = await runBench({
  mode: quick ? "quick" : "full",
  sizes: quick ? QUICK : FULL,
  runs,
  scenarios,
});
const dir = fileURLToPath(new URL("../../reports/", import.meta.url));
mkdirSync(dir, { recursive: true });
const file = `${dir}bench-${report.startedAt.replaceAll(":", "-").replace(/\..*/, "")}.json`;
writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
process.stdout.write(
  `\n## pnpm bench (${report.mode}, ${report.runs} run(s) each), ${report.startedAt}\n\n` +
    `${report.machine.nproc} cores (${report.machine.cpuModel}), load average before ${report.machine.loadAverage.join(" ")}, after ${report.machine.loadAverageAfter.join(" ")}; ` +
    `Node ${report.versions.node}, Postgres ${report.versions.postgres}, pg-transactional-outbox ${report.versions["pg-transactional-outbox"]}, sqs-consumer ${report.versions["sqs-consumer"]}\n\n` +
    `${markdownTable(report.rows)}\n\nmedian (min–max) of the runs; ratio = ours / peer on the medians. Raw figures: ${file}\n`,
);
process.exit(EXIT_OK);
