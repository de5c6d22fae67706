import type { Check } from "./checks.js";

export interface ScenarioResult {
  readonly scenario: string;
  readonly checks: readonly Check[];
  /** Every figure the scenario measured, for the JSON report. */
  readonly figures: Readonly<Record<string, unknown>>;
  readonly durationMs: number;
  readonly seed?: number;
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

/** The acceptance table in the source document's shape: check | result, plus a verdict column. */
export function renderTable(results: readonly ScenarioResult[]): string {
  const rows = results.flatMap((result) =>
    result.checks.map(
      (check) => `| ${cell(check.check)} | ${cell(check.result)} | ${check.pass ? "pass" : "**FAIL**"} |`,
    ),
  );
  return ["| check | result | verdict |", "|---|---|---|", ...rows].join("\n");
}

export function allPassed(results: readonly ScenarioResult[]): boolean {
  return results.every((result) => result.checks.every((check) => check.pass));
}
