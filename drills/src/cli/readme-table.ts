import fs from "node:fs";
import path from "node:path";
import { parseCommandLine, usageError } from "@outbox/shared/command-line";
import { EXIT_CRASH } from "@outbox/shared/exit-codes";
import { repoPath } from "@outbox/test-kit/process";
import { DEMO_DRILLS } from "../demo.js";
import { type DrillReport, readmeBlock, replaceReadmeBlock, rowsProblem } from "../readme-table.js";
import { rowsOf } from "../scenarios/index.js";

const usage = `usage: pnpm readme:table [REPORT]

Writes the README's acceptance table from a \`pnpm start\` run: the table as the run printed it, with
its date, seed, stack and machine. REPORT is the run's JSON report (default: the newest
reports/start-*.json). Refuses, changing nothing, a report whose rows are not the demo's or in which
a check failed.`;

const { positionals } = parseCommandLine(usage, {});
if (positionals.length > 1) usageError(usage, `one report at most, got ${positionals.length}`);

function refuse(reason: string): never {
  process.stderr.write(`readme:table: ${reason}\n`);
  process.exit(EXIT_CRASH);
}

function newestStartReport(): string {
  const reports = repoPath("reports");
  const names = fs.existsSync(reports)
    ? fs.readdirSync(reports).filter((name) => /^start-.*\.json$/.test(name))
    : [];
  // The names carry the run's ISO time, so the last in order is the newest.
  const newest = names.sort().at(-1);
  return newest ? path.join(reports, newest) : refuse("no reports/start-*.json: run `pnpm start` first");
}

// pnpm runs the script in drills/; a path given on the command line is the caller's (INIT_CWD).
const given = positionals[0];
const file =
  given === undefined ? newestStartReport() : path.resolve(process.env.INIT_CWD ?? process.cwd(), given);
let report: DrillReport;
try {
  report = JSON.parse(fs.readFileSync(file, "utf8")) as DrillReport;
} catch (error) {
  refuse(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
}
if (!Array.isArray(report.results as unknown)) refuse(`${file} is not a drill report (no results)`);
const checks = report.results.flatMap((result) => result.checks.map((check) => check.check));
const problem = rowsProblem(checks, rowsOf(DEMO_DRILLS));
if (problem !== undefined) refuse(`${file} is not a run of the demo's rows: ${problem}`);
if (typeof report.backend !== "string")
  refuse(`${file} does not say which stack it ran on: run \`pnpm start\` again`);
if (!report.passed) refuse(`${file} has a failed check: the README shows a run that passed`);

const readmePath = repoPath("README.md");
const readme = fs.readFileSync(readmePath, "utf8");
fs.writeFileSync(readmePath, replaceReadmeBlock(readme, readmeBlock(report)));
process.stdout.write(`README.md: the acceptance table of ${file} (${checks.length} rows)\n`);
