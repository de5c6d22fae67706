import { spawnSync } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
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
  it("prints the demo grid in the document's model and in Kubernetes', then the headline case tick by tick", () => {
    const { code, stdout } = run("simulate");
    expect(code).toBe(0);
    const [document, k8s] = stdout.split("\nKubernetes: ");
    expect(document).toContain(
      "| 0 (no wait) | served 46, dropped 10 (8 refused, 2 cut by SIGKILL) | served 48, dropped 8 (8 refused) |",
    );
    expect(document).toContain(
      "| 4 (covers the propagation) | served 54, dropped 2 (2 cut by SIGKILL) | served 56, dropped 0 |",
    );
    expect(k8s).toContain(
      "| 4 (covers the propagation) | served 50, dropped 6 (6 refused) | served 56, dropped 0 |",
    );
    expect(stdout).toContain(
      "\npod-1        =!!!!...........\n  dropped     2222\npod-2        ================\n",
    );
    expect(stdout).toContain(
      "\nserved 48, dropped 8 (8 refused)\n8 dropped, 48 served: 8 refused in 4 ticks",
    );
  });

  it("runs the setup its options give: every parameter, on either platform", () => {
    const covered = run("simulate", "--pre-stop", "4", "--grace", "10");
    expect(covered.code).toBe(0);
    expect(covered.stdout).toContain("preStop 4, terminationGracePeriod 10 (ticks)");
    expect(covered.stdout).toContain("\nserved 56, dropped 0\n0 dropped, 56 served:");
    expect(covered.stdout).not.toContain("| preStop \\ grace |");
    const single = run(
      "simulate",
      "--replicas",
      "1",
      "--pre-stop",
      "4",
      "--rate",
      "2",
      "--work",
      "1",
      "--propagation",
      "2",
    );
    expect(single.stdout).toMatch(/\nno endpoint\s+2+\n/);
    const document = run("simulate", "--platform", "document", "--pre-stop", "4", "--grace", "1");
    expect(document.stdout).toContain("preStop 4, grace after SIGTERM 1 (ticks)");
    expect(document.stdout).toContain("\nserved 54, dropped 2 (2 cut by SIGKILL)\n");
    const ecs = run("simulate", "--platform", "ecs", "--deregistration-delay", "5", "--stop-timeout", "1");
    expect(ecs.stdout).toContain("served 54, dropped 2 (2 cut by the load balancer)");
  });

  it("exits 64 with one line and the usage on a bad parameter", () => {
    const cases = [
      [["--replicas", "0"], '--replicas must be a whole number ≥ 1, got "0"'],
      [["--grace", "500"], '--grace must be at most 120, got "500"'],
      [["--platform", "nomad"], '--platform must be k8s, document or ecs, got "nomad"'],
      [["--platform", "ecs", "--pre-stop", "2"], "--pre-stop applies to document and k8s only, not ecs"],
      [["--platform", "document", "--stop-timeout", "2"], "--stop-timeout applies to ecs only, not document"],
      [["--port", "80"], "--port applies to --serve only"],
      [["4"], "unexpected argument: 4"],
    ] as const;
    for (const [args, reason] of cases) {
      const refused = run("simulate", ...args);
      expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 64, stdout: "" });
      expect(refused.stderr.startsWith(`${reason}\nusage: pnpm simulate `), refused.stderr).toBe(true);
    }
  });
});

describe("pnpm simulate --serve", () => {
  it("refuses a port in use with one line and exit 1", async () => {
    const taken = http.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = taken.address() as AddressInfo;
      const refused = run("simulate", "--serve", "--port", String(port));
      expect(refused).toEqual({
        code: 1,
        stdout: "",
        stderr: `simulate --serve: port ${port} is in use: pick another with --port\n`,
      });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
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

  it("plans a worker: only the drain and the stopTimeout", () => {
    const worker = run(
      "plan",
      "--platform",
      "ecs",
      "--mode",
      "worker",
      "--drain",
      "25s",
      "--stop-timeout",
      "20",
    );
    expect(worker.code).toBe(0);
    expect(worker.stdout).toMatch(/^ecs worker \(no load balancer\): drain 25 s, margin 5 s\n/);
    expect(worker.stdout).toMatch(/stopTimeout\s+30 s/);
    expect(worker.stdout).toContain("| given: stopTimeout 20 s (no load balancer) | cut by SIGKILL | 1 |");
    const misplaced = run(
      "plan",
      "--platform",
      "ecs",
      "--mode",
      "worker",
      "--drain",
      "1",
      "--propagation",
      "1",
    );
    expect(misplaced.code).toBe(64);
    expect(misplaced.stderr).toMatch(
      /^--propagation applies to --mode service only: a worker has no load balancer\n/,
    );
  });

  it("fails, without the table, on a recommendation it cannot deploy or that still drops", () => {
    const fargate = run("plan", "--platform", "ecs", "--mode", "worker", "--drain", "118s");
    expect({ code: fargate.code, stdout: fargate.stdout }).toEqual({ code: 1, stdout: "" });
    expect(fargate.stderr).toBe(
      "no deployable recommendation: the stop needs a stopTimeout of 123 s, above Fargate's maximum of 120 s: shorten the app's drain to 115 s or less\n",
    );
    const single = run(
      "plan",
      "--platform",
      "k8s",
      "--propagation",
      "1",
      "--longest-request",
      "1",
      "--drain",
      "1",
      "--replicas",
      "1",
    );
    expect(single.code).toBe(1);
    expect(single.stderr).toBe(
      "no deployable recommendation: with 1 replica the endpoint list is empty while it stops, whatever the settings: run at least 2\n",
    );
  });

  it("prints the usage on stdout and exits 0 on --help", () => {
    const help = run("plan", "--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: pnpm plan --platform ecs\|k8s/);
    expect(help.stderr).toBe("");
  });
});
