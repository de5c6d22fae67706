import fs from "node:fs";
import {
  CHECK_ROWS,
  type CheckRow,
  checkName,
  DEMO_DRILLS,
  type DrillReport,
  isCheckOf,
  readmeBlock,
  readmeTableChecks,
  replaceReadmeBlock,
  rowsOf,
  rowsProblem,
} from "@outbox/drills";
import { repoPath } from "@outbox/test-kit/process";
import { describe, expect, it } from "vitest";

const readme = fs.readFileSync(repoPath("README.md"), "utf8");
const demoRows = rowsOf(DEMO_DRILLS);

/** Every placeholder of the row filled with `figure`. */
function sampleName(row: CheckRow, figure = "7"): string {
  return CHECK_ROWS[row].replace(/\{\w+\}/g, figure);
}

describe("the README's acceptance table", () => {
  it("has the rows pnpm start reports: 11, in the demo's order, each the check its drill defines", () => {
    const checks = readmeTableChecks(readme);
    expect(demoRows).toEqual([
      "httpSigterm",
      "httpSigkill",
      "relaySigterm",
      "consumerSigterm",
      "restartDrain",
      "sigkill",
      "rollingRestart",
      "slowDependency",
      "deadline",
      "claimCheck",
      "replay",
    ]);
    expect(checks).toHaveLength(demoRows.length);
    expect(rowsProblem(checks, demoRows)).toBeUndefined();
  });

  it("is a passing run's, and says when, with which seed, on which stack and machine", () => {
    const block = readme.slice(readme.indexOf("<!-- acceptance table:"));
    expect(block).toMatch(
      /^<!-- [^\n]+ -->\nThe run of \d{4}-\d\d-\d\d \d\d:\d\d UTC \(seed \d+; the embedded stack; Node v[\d.]+, [^,]+, \d+ cores\):\n\n\| check \| result \| verdict \|\n/,
    );
    const verdicts = block
      .split("\n")
      .filter((line) => line.startsWith("| ") && !line.startsWith("| check |"))
      .slice(0, demoRows.length)
      .map((line) => line.split(" | ").at(-1));
    expect(verdicts).toEqual(demoRows.map(() => "pass |"));
  });

  it("notices a row left out, one added, two swapped or a check whose wording changed", () => {
    const checks = readmeTableChecks(readme);
    const withoutRollingRestart = checks.filter((_, index) => demoRows[index] !== "rollingRestart");
    expect(rowsProblem(withoutRollingRestart, demoRows)).toMatch(/^row 7 should be "rolling restart: /);
    expect(rowsProblem([...checks, sampleName("fault")], demoRows)).toBe("12 rows where the demo reports 11");
    const swapped = [checks[1] ?? "", checks[0] ?? "", ...checks.slice(2)];
    expect(rowsProblem(swapped, demoRows)).toMatch(/^row 1 should be "HTTP: /);
    const reworded = checks.map((check) =>
      check.replace("SIGTERM during the first batch", "SIGTERM in the batch"),
    );
    expect(rowsProblem(reworded, demoRows)).toMatch(/^row 3 should be "relay: /);
  });
});

describe("the rows the drills define", () => {
  it("fill their placeholders, and a name matches only its own row", () => {
    expect(checkName("relaySigterm", { total: 150, batchSize: 100 })).toBe(
      "relay: 150 events queued, SIGTERM during the first batch of 100",
    );
    const rows = Object.keys(CHECK_ROWS) as CheckRow[];
    // A row that is all placeholder (a fault's or an outage's own words) matches any name.
    const freeText = (row: CheckRow) => /^\{\w+\}$/.test(CHECK_ROWS[row]);
    for (const row of rows) {
      expect(isCheckOf(row, sampleName(row)), row).toBe(true);
      const others = rows.filter(
        (other) => other !== row && !freeText(other) && isCheckOf(other, sampleName(row)),
      );
      expect(others, row).toEqual([]);
    }
    // A figure never holds the table's column separator.
    expect(isCheckOf("sigkill", "same with SIGKILL (comparison, 2 | 3 kills)")).toBe(false);
  });

  it("are what pnpm readme:table writes back: the run's checks, escaped and read again", () => {
    const report: DrillReport = {
      startedAt: "2026-12-04T20:50:32.892Z",
      machine: { node: "v20.20.2", platform: "linux x64", cpus: 2 },
      seed: 1,
      backend: "embedded",
      passed: true,
      results: [
        {
          scenario: "faults",
          checks: [{ row: "fault", check: "a | b", result: "x", pass: true }],
          figures: {},
          durationMs: 1,
        },
      ],
    };
    const block = readmeBlock(report);
    const written = replaceReadmeBlock(readme, block);
    expect(readmeTableChecks(written)).toEqual(["a | b"]);
    expect(written).toContain(
      "The run of 2026-12-04 20:50 UTC (seed 1; the embedded stack; Node v20.20.2, linux x64, 2 cores):",
    );
    expect(
      replaceReadmeBlock(
        written,
        readme.slice(
          readme.indexOf("<!-- acceptance table:"),
          readme.indexOf("<!-- end of the acceptance table -->") +
            "<!-- end of the acceptance table -->".length,
        ),
      ),
    ).toBe(readme);
    expect(() => replaceReadmeBlock("# no table", block)).toThrow(/the README has no acceptance table block/);
  });
});
