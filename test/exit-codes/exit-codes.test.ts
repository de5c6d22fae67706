import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { hangLimit } from "@outbox/test-kit";
import { describe, expect, it } from "vitest";

/**
 * A failure must fail the run. Each case runs a real child process the way a developer or CI
 * does — vitest with the project's own config and global set-up (which loads embedded Postgres),
 * and the drills' CLI — and reads its exit code.
 */
const root = fileURLToPath(new URL("../../", import.meta.url));
const vitestBin = path.join(root, "node_modules/vitest/vitest.mjs");
const fixtures = "test/exit-codes/fixtures";

interface Finished {
  readonly code: number | null;
  readonly output: string;
}

/** The parent's environment without this test run's own vitest variables, and plain text. */
function childEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", ...extra };
  delete env.FORCE_COLOR;
  for (const name of Object.keys(env)) if (name.startsWith("VITEST")) delete env[name];
  return env;
}

function runToExit(
  command: string,
  args: readonly string[],
  extraEnv: Record<string, string>,
): Promise<Finished> {
  return new Promise((resolve) => {
    execFile(
      command,
      [...args],
      { cwd: root, env: childEnvironment(extraEnv), maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
        resolve({ code, output: `${stdout}\n${stderr}` });
      },
    );
  });
}

function runFixture(fixture: string): Promise<Finished> {
  return runToExit(
    process.execPath,
    [vitestBin, "run", "--config", "vitest.config.ts", "--reporter", "dot"],
    { OUTBOX_TEST_FIXTURE: `${fixtures}/${fixture}` },
  );
}

describe("the test runner's exit code, with embedded Postgres loaded by the global set-up", {
  timeout: hangLimit({ testRun: 1 }),
}, () => {
  it("is 0 when every test passes (the control)", async () => {
    const run = await runFixture("passing.fixture.ts");
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/Tests\s+1 passed/);
  });

  it("is non-zero when a test fails", async () => {
    const run = await runFixture("failing-assertion.fixture.ts");
    expect(run.output).toMatch(/Tests\s+1 failed/);
    expect(run.code, run.output).toBe(1);
  });

  it("is non-zero when a beforeAll hook throws", async () => {
    const run = await runFixture("failing-hook.fixture.ts");
    expect(run.output).toContain("set-up fails on purpose");
    expect(run.code, run.output).toBe(1);
  });
});

describe("the drills' exit code", () => {
  it(
    "is 1 when a check fails: a drain too short for the batch in flight cuts it and re-sends",
    async () => {
      const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "outbox-exit-codes-")), "drill.json");
      try {
        // A valid budget (every inner timeout below its outer one) whose drain is shorter than the
        // stop drill's slowed first batch: the relay must cut the batch, and the check must say so.
        const run = await runToExit("pnpm", ["drill", "relay-sigterm", "--quick", "--report", report], {
          RELAY_DRAIN_TIMEOUT_MS: "400",
          AWS_REQUEST_TIMEOUT_MS: "300",
          AWS_MAX_ATTEMPTS: "1",
          DB_STATEMENT_TIMEOUT_MS: "300",
        });
        expect(run.code, run.output).toBe(1);
        expect(run.output).toMatch(/\| relay: .*batch cut at .*\| \*\*FAIL\*\* \|/);
        const written = JSON.parse(fs.readFileSync(report, "utf8")) as { passed: boolean };
        expect(written.passed).toBe(false);
      } finally {
        fs.rmSync(path.dirname(report), { recursive: true, force: true });
      }
    },
    hangLimit({ drill: 1 }),
  );
});
