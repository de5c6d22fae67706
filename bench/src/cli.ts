/**
 * pnpm bench [--quick] [--runs N] [--only relay,latency,consumer,stop,scale,api] [--wait-for-load]
 *
 * Measures our relay and consumer beside pg-transactional-outbox and sqs-consumer on one embedded
 * stack (Postgres with wal_level=logical, SQS, the SNS emulator). Progress on stderr, the Markdown
 * table on stdout, every raw figure in reports/bench-<time>.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runBench } from "./bench.js";
import { FULL, QUICK, SCENARIOS, type ScenarioName } from "./context.js";
import { waitForLowLoad } from "./measure.js";
import { markdownTable } from "./report.js";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    runs: { type: "string" },
    only: { type: "string" },
    "wait-for-load": { type: "boolean", default: false },
  },
});
const quick = values.quick === true;
const runs = Number(values.runs ?? 3);
if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs must be a positive integer");
const scenarios = (values.only?.split(",") ?? [...SCENARIOS]) as ScenarioName[];
for (const name of scenarios) {
  if (!SCENARIOS.includes(name))
    throw new Error(`unknown scenario ${name}; choose from ${SCENARIOS.join(", ")}`);
}
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
process.exit(0);
