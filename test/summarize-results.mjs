// Reads vitest's JSON results (one file, or several runs' files added up, each run's line first) and
// prints one plain line, `N passed, N failed, N skipped`; exits 1 when anything failed or no test
// ran, whatever the runners' own exit codes said. Used by .ci/run (and so by `pnpm test:under-load`). A file whose set-up failed counts as
// one failure even when its tests were only skipped; a results file that is missing counts as a run
// that never got to vitest.
import fs from "node:fs";

const files = process.argv.slice(2);
let passed = 0;
let failed = 0;
let skipped = 0;
const problems = [];
if (files.length === 0) problems.push("no test results given: the test run did not get to vitest");
for (const file of files) {
  if (!fs.existsSync(file)) {
    failed += 1;
    problems.push(`no test results at ${file}: the test run did not get to vitest`);
    continue;
  }
  const results = JSON.parse(fs.readFileSync(file, "utf8"));
  const failedFiles = results.testResults.filter(
    (entry) => entry.status === "failed" && !entry.assertionResults.some((test) => test.status === "failed"),
  );
  const run = {
    passed: results.numPassedTests,
    failed: results.numFailedTests + failedFiles.length,
    skipped: results.numPendingTests + results.numTodoTests,
  };
  // Each run on a line of its own when there are several (CI's: main, slow, Postgres 13).
  if (files.length > 1)
    console.log(`${file}: ${run.passed} passed, ${run.failed} failed, ${run.skipped} skipped`);
  passed += run.passed;
  failed += run.failed;
  skipped += run.skipped;
  for (const entry of failedFiles)
    problems.push(`failed before its tests ran: ${entry.name}: ${entry.message}`);
}
for (const problem of problems) console.error(problem);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
if (failed > 0 || passed === 0) process.exit(1);
