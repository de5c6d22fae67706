import { CHECK_ROWS, type CheckRow, isCheckOf } from "./check-rows.js";
import { renderTable, type ScenarioResult } from "./report.js";

/*
 * The README's acceptance table is a real `pnpm start` run's, written between two markers by
 * `pnpm readme:table`, never by hand; test/docs/readme-table.test.ts holds its rows to the demo's.
 */

export const README_TABLE_START =
  "<!-- acceptance table: written by `pnpm readme:table` from a `pnpm start` report; do not edit by hand -->";
export const README_TABLE_END = "<!-- end of the acceptance table -->";

/** What `pnpm start` and `pnpm drill` write to reports/ (drill-session.ts), as far as the README needs it. */
export interface DrillReport {
  readonly startedAt: string;
  readonly machine: { readonly node: string; readonly platform: string; readonly cpus: number };
  readonly seed: number;
  readonly backend: string;
  readonly passed: boolean;
  readonly results: readonly ScenarioResult[];
}

function blockOf(readme: string): { readonly start: number; readonly end: number } {
  const start = readme.indexOf(README_TABLE_START);
  const end = readme.indexOf(README_TABLE_END);
  if (start < 0 || end < start) {
    throw new Error(`the README has no acceptance table block (${README_TABLE_START} … ${README_TABLE_END})`);
  }
  return { start, end: end + README_TABLE_END.length };
}

/** The check column of every row of the README's table, in order, unescaped as renderTable escapes it. */
export function readmeTableChecks(readme: string): string[] {
  const { start, end } = blockOf(readme);
  return readme
    .slice(start, end)
    .split("\n")
    .filter((line) => line.startsWith("| ") && !line.startsWith("| check | result |"))
    .map((line) => (line.slice(2).split(/(?<!\\) \| /)[0] ?? "").replaceAll("\\|", "|"));
}

/** Why these check columns are not the rows, in one line; undefined when they are, in count and order. */
export function rowsProblem(checks: readonly string[], rows: readonly CheckRow[]): string | undefined {
  const mismatch = rows.findIndex((row, index) => !isCheckOf(row, checks[index] ?? ""));
  if (mismatch >= 0) {
    const row = rows[mismatch] as CheckRow;
    return `row ${mismatch + 1} should be "${CHECK_ROWS[row]}" (${row}), found ${JSON.stringify(checks[mismatch] ?? "no row")}`;
  }
  if (checks.length !== rows.length) return `${checks.length} rows where the demo reports ${rows.length}`;
  return undefined;
}

/** The block for the README: where and how the run was made, then its table as it printed it. */
export function readmeBlock(report: DrillReport): string {
  const { machine } = report;
  const ran = `${report.startedAt.slice(0, 16).replace("T", " ")} UTC`;
  return [
    README_TABLE_START,
    `The run of ${ran} (seed ${report.seed}; the ${report.backend} stack; Node ${machine.node}, ${machine.platform}, ${machine.cpus} cores):`,
    "",
    renderTable(report.results),
    README_TABLE_END,
  ].join("\n");
}

/** The README with its acceptance table block replaced by `block`. */
export function replaceReadmeBlock(readme: string, block: string): string {
  const { start, end } = blockOf(readme);
  return `${readme.slice(0, start)}${block}${readme.slice(end)}`;
}
