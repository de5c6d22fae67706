import { parseArgs } from "node:util";
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

const { values, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        quick: { type: "boolean", default: false },
        seed: { type: "string" },
        report: { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${usage}\n`);
    process.exit(2);
  }
})();
if (values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
const unknown = positionals.filter((name) => !(name in drills));
if (unknown.length > 0) {
  process.stderr.write(`unknown scenario: ${unknown.join(", ")}\n${usage}\n`);
  process.exit(2);
}
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
if (!Number.isInteger(seed)) {
  process.stderr.write(`--seed must be a whole number, got "${values.seed}"\n`);
  process.exit(2);
}

// Exit explicitly: keep-alive sockets of SDK clients must not hold the finished session open.
process.exit(
  await runDrillSession({
    drills: positionals.length > 0 ? positionals : Object.keys(drills),
    scale: values.quick ? testScale : fullScale,
    seed,
    ...(values.report ? { reportPath: values.report } : {}),
  }),
);
