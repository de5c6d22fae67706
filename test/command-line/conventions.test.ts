import { describe, expect, it } from "vitest";
import { expectAnswer, expectUsageError, runEntryPoint, versionOf } from "../support/run-entry-point.js";

/**
 * The one-shot programs that share @outbox/shared/command-line follow its conventions (the daemons'
 * own tests cover relay, consumer and api): --help/-h on stdout with exit 0, --version the
 * package's version, a usage error on stderr with exit 64. `--help` wins over anything else on the line.
 */
const programs = [
  { name: "migrate", entry: "packages/shared/src/db/migrate-cli.ts", pkg: "packages/shared/package.json" },
  { name: "drill", entry: "packages/drills/src/cli/drill.ts", pkg: "packages/drills/package.json" },
  { name: "start", entry: "packages/drills/src/cli/start.ts", pkg: "packages/drills/package.json" },
  {
    name: "simulate",
    entry: "packages/termination-race/src/cli/simulate.ts",
    pkg: "packages/termination-race/package.json",
  },
  {
    name: "plan",
    entry: "packages/termination-race/src/cli/plan.ts",
    pkg: "packages/termination-race/package.json",
  },
] as const;

// drill and start load the whole drill stack before they parse their command line: slow on a busy machine.
describe.each(programs)("pnpm $name", { timeout: 120_000 }, ({ name, entry, pkg }) => {
  const usage = new RegExp(`^usage: pnpm ${name}\\b`);

  it("prints the usage on stdout and exits 0 on --help and -h, and the version on --version", async () => {
    const [help, h, version] = await Promise.all([
      runEntryPoint(entry, ["--help"]),
      runEntryPoint(entry, ["--no-such-option", "-h"]),
      runEntryPoint(entry, ["--version"]),
    ]);
    expectAnswer(help, usage);
    expectAnswer(h, usage);
    expect(h.stdout).toBe(help.stdout);
    expectAnswer(version, new RegExp(`^${versionOf(pkg)}\\n$`));
  });

  it("prints the reason and the usage on stderr and exits 64 on an unknown option", async () => {
    expectUsageError(
      await runEntryPoint(entry, ["--no-such-option"]),
      "Unknown option '--no-such-option'",
      usage,
    );
  });
});
