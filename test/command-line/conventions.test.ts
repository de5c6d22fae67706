import fs from "node:fs";
import { configRefusal, expectAnswer, expectUsageError, runEntryPoint, versionOf } from "@outbox/test-kit";
import { describe, expect, it } from "vitest";

/**
 * The entry point a root script runs, read from package.json, so the tests follow the script. Only a
 * script of the form `tsx --conditions=development ENTRY`: the way runEntryPoint starts it.
 */
function rootScriptEntry(name: string): string {
  const { scripts } = JSON.parse(fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    scripts: Record<string, string>;
  };
  const entry = /^tsx --conditions=development (\S+\.ts)$/.exec(scripts[name] ?? "")?.[1];
  if (entry === undefined) throw new Error(`pnpm ${name} is not \`tsx --conditions=development ENTRY\``);
  return entry;
}

/**
 * Two entry points answer as `pnpm migrate`: the root script's (the checkout's, which also knows
 * `--api`) and the relay image's runner (node node_modules/@outbox/shared/dist/db/migrate-cli.js).
 * Both take the version of @outbox/shared, whose command they run.
 */
const migrateEntries = [
  { entry: rootScriptEntry("migrate") },
  { entry: "packages/shared/src/db/migrate-cli.ts" },
] as const;

/**
 * The one-shot programs that share @outbox/shared/command-line follow its conventions (the daemons'
 * own tests cover relay, consumer and api): --help/-h on stdout with exit 0, --version the
 * package's version, a usage error on stderr with exit 64. `--help` wins over anything else on the line.
 */
const programs = [
  ...migrateEntries.map(({ entry }) => ({ name: "migrate", entry, pkg: "packages/shared/package.json" })),
  { name: "drill", entry: "drills/src/cli/drill.ts", pkg: "drills/package.json" },
  { name: "start", entry: "drills/src/cli/start.ts", pkg: "drills/package.json" },
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
  { name: "bench", entry: "bench/src/cli.ts", pkg: "bench/package.json" },
  { name: "stack", entry: "drills/src/cli/stack.ts", pkg: "drills/package.json" },
  { name: "readme:table", entry: "drills/src/cli/readme-table.ts", pkg: "drills/package.json" },
  { name: "console", entry: "apps/console/src/main.ts", pkg: "apps/console/package.json" },
] as const;

// drill and start load the whole drill stack before they parse their command line: slow on a busy machine.
describe.each(programs)("pnpm $name ($entry)", { timeout: 120_000 }, ({ name, entry, pkg }) => {
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

describe("pnpm bench's own options", { timeout: 120_000 }, () => {
  const usage = /^usage: pnpm bench \[--quick\]/;

  it("a bad value or an unknown scenario is a usage error, before anything is measured", async () => {
    const [runs, only, argument] = await Promise.all([
      runEntryPoint("bench/src/cli.ts", ["--runs", "0"]),
      runEntryPoint("bench/src/cli.ts", ["--only", "relay,latncy"]),
      runEntryPoint("bench/src/cli.ts", ["quick"]),
    ]);
    expectUsageError(runs, '--runs must be a whole number ≥ 1, got "0"', usage);
    expectUsageError(
      only,
      "unknown scenario: latncy; choose from relay, relay-latency-sns, latency, consumer, stop, scale, api, growth, enqueue",
      usage,
    );
    expectUsageError(argument, "unexpected argument: quick", usage);
  });
});

describe("pnpm migrate's flags", { timeout: 120_000 }, () => {
  const [checkout, relayImage] = migrateEntries;

  it("the root script's entry offers --demo and --api (the photo service's set)", async () => {
    expectAnswer(
      await runEntryPoint(checkout.entry, ["--help"]),
      /^usage: pnpm migrate \[--demo\] \[--api\] {3}\(/,
    );
  });

  it("the relay image's runner offers --demo only, and refuses --api as an unknown option", async () => {
    const usage = /^usage: pnpm migrate \[--demo\] {3}\(/;
    const [help, api] = await Promise.all([
      runEntryPoint(relayImage.entry, ["--help"]),
      runEntryPoint(relayImage.entry, ["--api"]),
    ]);
    expectAnswer(help, usage);
    expectUsageError(api, "Unknown option '--api'", usage);
  });
});

describe.each(migrateEntries)("pnpm migrate's configuration ($entry)", { timeout: 120_000 }, ({ entry }) => {
  it("lists every problem at once, the TLS settings' included, and exits 78", async () => {
    const lines = await configRefusal(entry, {
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/unused?sslmode=allow",
      DB_STATEMENT_TIMEOUT_MS: "5s",
      LOG_LEVEL: "loud",
    });
    expect(lines).toEqual([
      'migrate: config error: DB_STATEMENT_TIMEOUT_MS: expected a whole number (got "5s")',
      'migrate: config error: LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent (got "loud")',
      "migrate: config error: DATABASE_URL: sslmode=allow is not supported (no fallback between TLS and plain text, no CA-only check): use disable, require or verify-full, in the URL or in DB_SSL_MODE",
    ]);
  });
});

/**
 * The daemons' one-shot commands, each under the same conventions: `--help` on stdout with exit 0, an
 * unknown option a usage error (exit 64), a configuration that cannot work one readable line per
 * problem (exit 78) before anything is touched.
 */
const oneShotCommands = [
  {
    name: "consumer dlq list",
    entry: "apps/consumer/src/main.ts",
    args: ["dlq", "list"],
    refused:
      "consumer dlq list: config error: CONSUMER_DLQ_URL: is required: the queue the dead letters are in",
  },
  {
    name: "consumer redrive",
    entry: "apps/consumer/src/main.ts",
    args: ["redrive"],
    refused:
      "consumer redrive: config error: CONSUMER_DLQ_URL: is required: the queue the dead letters are in",
  },
  {
    name: "relay republish",
    entry: "apps/relay/src/main.ts",
    args: ["republish", "--from", "2026-12-01T10:00:00Z", "--inbox-retention-hours", "336"],
    refused:
      "relay republish: config error: RELAY_TOPIC_ARNS: neither RELAY_TOPIC_ARNS nor RELAY_DEFAULT_TOPIC_ARN is set: every row would be dead at once (unknown topic); map the outbox topics to SNS topic ARNs",
  },
] as const;

/** An environment each command refuses with exactly its `refused` line: no DLQ, no topic routing. */
const refusedEnv = {
  CONSUMER_QUEUE_URL: "http://127.0.0.1:1/000000000000/q",
  CONSUMER_DLQ_URL: "",
  DATABASE_URL: "postgres://nobody@127.0.0.1:1/unused",
  RELAY_TOPIC_ARNS: "",
  RELAY_DEFAULT_TOPIC_ARN: "",
};

describe.each(oneShotCommands)("$name", { timeout: 120_000 }, ({ name, entry, args, refused }) => {
  const usage = new RegExp(`^usage: ${name}\\b`);

  it("--help prints its usage and the variables it reads on stdout, exit 0", async () => {
    const help = await runEntryPoint(entry, [...args, "--help"]);
    expectAnswer(help, usage);
    expect(help.stdout).toMatch(/\nReads only these variables; invalid configuration exits 78/);
  });

  it("an unknown option is a usage error (exit 64), a configuration that cannot work one line (exit 78)", async () => {
    const [unknown, lines] = await Promise.all([
      runEntryPoint(entry, [...args, "--no-such-option"]),
      configRefusal(entry, refusedEnv, [...args]),
    ]);
    expectUsageError(unknown, "Unknown option '--no-such-option'", usage);
    expect(lines).toEqual([refused]);
  });
});

describe("consumer dlq, a group of commands", { timeout: 120_000 }, () => {
  it("is listed command by command, and wants one named", async () => {
    const [program, group, bare] = await Promise.all([
      runEntryPoint("apps/consumer/src/main.ts", ["--help"]),
      runEntryPoint("apps/consumer/src/main.ts", ["dlq", "--help"]),
      runEntryPoint("apps/consumer/src/main.ts", ["dlq"]),
    ]);
    expectAnswer(program, /\n +consumer dlq list \[--json\] +the DLQ's messages/);
    expectAnswer(group, /^usage: consumer dlq list \[--json\] +the DLQ's messages/);
    expectUsageError(bare, "expected a command", /^usage: consumer dlq list/);
  });
});
