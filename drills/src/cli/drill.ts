import { parseCommandLine, usageError, wholeNumberOption } from "@outbox/shared/command-line";
import { randomSeed } from "@outbox/test-kit/process";
import { fullScale, testScale } from "../drill-context.js";
import { drills } from "../scenarios/index.js";
import { runDrillSession } from "./drill-session.js";

const usage = `usage: pnpm drill [scenario…] [--quick] [--seed N] [--report FILE]

Runs the stop drills against real relay and consumer processes on an embedded stack, prints the
acceptance table (check | result) and writes a JSON report. Exit code 1 when an expectation fails.

scenarios: ${Object.keys(drills).join(", ")} (default: all)
  --quick        the scaled-down sizes the test suite uses
  --seed N       seed of the random moments (printed by every run, to repeat it)
  --report FILE  where the JSON report goes (default reports/drill-<time>.json)`;

const { values, positionals } = parseCommandLine(usage, {
  quick: { type: "boolean", default: false },
  seed: { type: "string" },
  report: { type: "string" },
});
const unknown = positionals.filter((name) => !(name in drills));
if (unknown.length > 0) usageError(usage, `unknown scenario: ${unknown.join(", ")}`);
const seed = wholeNumberOption(usage, "seed", values.seed, randomSeed(), 0);

// Exit explicitly: keep-alive sockets of SDK clients must not hold the finished session open.
process.exit(
  await runDrillSession({
    drills: positionals.length > 0 ? positionals : Object.keys(drills),
    scale: values.quick === true ? testScale : fullScale,
    seed,
    ...(typeof values.report === "string" ? { reportPath: values.report } : {}),
  }),
);
