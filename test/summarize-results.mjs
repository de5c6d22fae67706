// Reads vitest's JSON results and prints one plain line, `N passed, N failed, N skipped`; exits 1
// when anything failed or no test ran, whatever the runner's own exit code said. Used by .ci/run
// and `pnpm test:stress`. A file whose set-up failed counts as one failure even when its tests were
// only skipped.
import fs from "node:fs";

const file = process.argv[2];
if (!file || !fs.existsSync(file)) {
  console.log("0 passed, 0 failed, 0 skipped");
  console.error(`no test results at ${file ?? "(no path given)"}: the test run did not get to vitest`);
  process.exit(1);
}
const results = JSON.parse(fs.readFileSync(file, "utf8"));
const failedFiles = results.testResults.filter(
  (entry) => entry.status === "failed" && !entry.assertionResults.some((test) => test.status === "failed"),
);
const passed = results.numPassedTests;
const failed = results.numFailedTests + failedFiles.length;
const skipped = results.numPendingTests + results.numTodoTests;
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
for (const entry of failedFiles)
  console.error(`failed before its tests ran: ${entry.name}: ${entry.message}`);
if (failed > 0 || passed === 0) process.exit(1);
