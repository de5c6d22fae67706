import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("..", import.meta.url));

function run(script: "simulate" | "plan", ...args: string[]) {
  const result = spawnSync(
    process.execPath,
    ["--import", "tsx", "--conditions=development", `src/cli/${script}.ts`, ...args],
    { cwd: packageDir, encoding: "utf8" },
  );
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("pnpm simulate", () => {
  it("prints the demo grid and the document's headline case", () => {
    const { code, stdout } = run("simulate");
    expect(code).toBe(0);
    expect(stdout).toContain(
      "| 0 (no wait) | served 46, dropped 10 (8 refused, 2 cut by SIGKILL) | served 48, dropped 8 (8 refused) |",
    );
    expect(stdout).toContain("what happened with preStop 0, grace 10 (served 48, dropped 8):");
  });
});

describe("pnpm plan", () => {
  it("prints a plan", () => {
    const { code, stdout } = run(
      "plan",
      "--platform",
      "ecs",
      "--propagation",
      "5",
      "--longest-request",
      "10s",
      "--drain",
      "25000ms",
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(/deregistration delay\s+15 s/);
    expect(stdout).toMatch(/stopTimeout\s+30 s/);
  });

  it("exits 64 with the reason and the usage on a usage error", () => {
    const missing = run("plan", "--platform", "k8s", "--propagation", "5");
    expect(missing.code).toBe(64);
    expect(missing.stderr).toMatch(/^--longest-request is required\nusage: pnpm plan/);
    expect(missing.stdout).toBe("");
    expect(run("plan", "--platform", "nomad").stderr).toContain("--platform must be ecs or k8s");
    const misplaced = run(
      "plan",
      "--platform",
      "ecs",
      "--pre-stop",
      "3",
      "--propagation",
      "1",
      "--longest-request",
      "1",
      "--drain",
      "1",
    );
    expect(misplaced.code).toBe(64);
    expect(misplaced.stderr).toContain("--pre-stop applies to k8s only");
    expect(run("plan", "--platform", "k8s", "--propagation", "soon").code).toBe(64);
  });

  it("prints the usage on stdout and exits 0 on --help", () => {
    const help = run("plan", "--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: pnpm plan --platform ecs\|k8s/);
    expect(help.stderr).toBe("");
  });
});
