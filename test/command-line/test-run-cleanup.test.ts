import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hangLimit, repoPath, waitUntil } from "@outbox/test-kit";
import { afterEach, describe, expect, it, vi } from "vitest";

// Each test runs the suite's runner on a fixture (its stack's start-up in it), then cuts it: a run's
// hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ testRun: 1 }) });

// `pnpm test` the way a user meets it when something goes wrong: a test that fails, a set-up hook
// that throws, a run interrupted from the terminal, a run whose output's reader has gone. Each is a
// real vitest run of the project's own configuration and global set-up (embedded Postgres and moto
// as child processes of the runner); once it has ended, none of the servers it started may be left
// running, nor a daemon one of its tests started, nor the worker that ran the test.

interface ServerProcess {
  readonly pid: number;
  readonly commandLine: string[];
}

/** The processes whose parent is `parentPid`, read from /proc (Linux). */
function childrenOf(parentPid: number): ServerProcess[] {
  const children: ServerProcess[] = [];
  for (const name of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ")".
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (parent !== parentPid) continue;
      children.push({
        pid: Number(name),
        commandLine: readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0"),
      });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return children;
}

function alive(pid: number): boolean {
  try {
    // A zombie still answers signal 0 but holds nothing: look at its state.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

const runs: ChildProcess[] = [];
const seenServers: ServerProcess[] = [];
// When a check fails, the servers it found alive are this test's to stop.
afterEach(async () => {
  for (const run of runs.splice(0)) if (run.exitCode === null && run.signalCode === null) run.kill("SIGKILL");
  for (const server of seenServers.splice(0)) {
    if (!alive(server.pid)) continue;
    process.kill(server.pid, "SIGKILL");
    const dataDir = dataDirOf(server);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }
});

function dataDirOf(server: ServerProcess): string | undefined {
  const at = server.commandLine.indexOf("-D");
  return at === -1 ? undefined : server.commandLine[at + 1];
}

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

interface FinishedRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly output: string;
  /** The stack's servers as they ran: the Postgres postmaster and moto_server. */
  readonly servers: ServerProcess[];
  /** The daemon hangs.fixture.ts started through the test kit, and the worker that started it. */
  readonly testProcesses: number[];
  /** The runner's pid, which names its run folder (test/global-setup.ts). */
  readonly pid: number;
}

/**
 * How a run is cut once the fixture's test runs: a signal to the runner, or its output's reader
 * gone (`vitest run | sed` with `sed` killed): stdout and stderr become a closed pipe.
 */
type Interruption = NodeJS.Signals | "closed output";

/**
 * Runs one fixture file under vitest; `interrupt` cuts the run once the fixture's test is running.
 * Collects the runner's server children while it runs, for the caller to check after.
 */
async function runFixture(fixture: string, interrupt?: Interruption): Promise<FinishedRun> {
  const markerDir = await mkdtemp(join(tmpdir(), "outbox-fixture-"));
  const marker = join(markerDir, "running");
  const outputClosed = join(markerDir, "output-closed");
  const run = spawn(
    process.execPath,
    [repoPath("node_modules/vitest/vitest.mjs"), "run", "--config", "vitest.config.ts"],
    {
      cwd: repoPath("."),
      env: {
        ...process.env,
        OUTBOX_FIXTURE_RUNNING: marker,
        OUTBOX_FIXTURE_WRITE: outputClosed,
        OUTBOX_TEST_FIXTURE: `test/command-line/fixtures/test-run/${fixture}`,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  runs.push(run);
  let output = "";
  run.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  run.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const ended = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    run.once("exit", (code, signal) => resolve([code, signal])),
  );
  const servers = new Map<number, ServerProcess>();
  let finished = false;
  void ended.then(() => (finished = true));
  const pid = run.pid ?? -1;
  // Watched until the run ends: each server is seen once it has started.
  const watching = (async () => {
    while (!finished) {
      for (const child of childrenOf(pid)) {
        if (child.commandLine.some((part) => part.endsWith("/postgres") || part.includes("moto_server"))) {
          if (!servers.has(child.pid)) seenServers.push(child);
          servers.set(child.pid, child);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const testProcesses: number[] = [];
  try {
    if (interrupt) {
      const daemonPid = () => (existsSync(marker) ? Number(readFileSync(marker, "utf8")) : 0);
      await waitUntil("the fixture's test to run", () => daemonPid() > 0 || finished, {
        timeoutMs: 90_000,
      });
      if (!finished) {
        const daemon = daemonPid();
        testProcesses.push(daemon, parentOf(daemon));
        for (const each of testProcesses) seenServers.push({ pid: each, commandLine: [] });
      }
      if (interrupt === "closed output") {
        run.stdout?.destroy();
        run.stderr?.destroy();
        await writeFile(outputClosed, "");
      } else run.kill(interrupt);
    }
    const [code, signal] = await ended;
    await watching;
    return { code, signal, output, servers: [...servers.values()], testProcesses, pid };
  } finally {
    await rm(markerDir, { recursive: true, force: true });
  }
}

async function expectNothingLeft(run: FinishedRun): Promise<void> {
  const kinds = run.servers.map((server) =>
    server.commandLine.some((part) => part.includes("moto_server")) ? "moto_server" : "postgres",
  );
  // Both servers were seen, so "none left" below is about them, not about a run that started none.
  expect(new Set(kinds), run.output.slice(-2_000)).toEqual(new Set(["moto_server", "postgres"]));
  expect(run.servers.filter((server) => alive(server.pid))).toEqual([]);
  // Gone at once or soon after (its watchdog sees its parent's end): waited for, not assumed.
  for (const pid of run.testProcesses) await expect.poll(() => alive(pid), { timeout: 30_000 }).toBe(false);
  for (const server of run.servers) {
    const dataDir = dataDirOf(server);
    if (dataDir) expect(existsSync(dataDir)).toBe(false);
  }
  // Nor the run's folder on disk (the packed tarballs, the build lock).
  expect(readdirSync(tmpdir()).filter((name) => name.startsWith(`outbox-test-run-${run.pid}-`))).toEqual([]);
}

describe("a test run that goes wrong leaves no server behind", () => {
  it("a failing test: the run exits 1, the stack is gone", async () => {
    const run = await runFixture("fails.fixture.ts");
    expect(run.code, run.output.slice(-2_000)).toBe(1);
    expect(run.output).toContain("fails on purpose");
    await expectNothingLeft(run);
  });

  it("a set-up hook that throws: the run exits 1, the stack is gone", async () => {
    const run = await runFixture("fails-in-before-all.fixture.ts");
    expect(run.code, run.output.slice(-2_000)).toBe(1);
    expect(run.output).toContain("a set-up hook that throws on purpose");
    await expectNothingLeft(run);
  });

  it.each(["SIGINT", "SIGTERM"] as const)(
    "interrupted by %s: the run ends non-zero, the stack and the test's daemon are gone",
    async (signal) => {
      const run = await runFixture("hangs.fixture.ts", signal);
      expect(run.code === 0, run.output.slice(-2_000)).toBe(false);
      expect(run.testProcesses).toHaveLength(2);
      await expectNothingLeft(run);
    },
    // A hang-catcher: a whole stack and a daemon start first; 56 s measured with two other suites running.
    hangLimit({ testRun: 1 }),
  );

  // Before: the first write after the reader had gone raised EPIPE, the set-up's error printer
  // threw EPIPE in turn, and the runner died (exit 7) without its exit clean-up: moto_server, the
  // postmaster, the worker and its daemon were left running, reparented to init.
  it(
    "its output's reader gone: the run ends as SIGPIPE would (141), the stack and the test's daemon are gone",
    async () => {
      const run = await runFixture("hangs.fixture.ts", "closed output");
      expect(run.code).toBe(141);
      expect(run.testProcesses).toHaveLength(2);
      await expectNothingLeft(run);
      // A hang-catcher: a whole stack and a daemon start first; 55 s measured with two other suites running.
    },
    hangLimit({ testRun: 1 }),
  );
});
