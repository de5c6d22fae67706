import { configRefusal, type DaemonProcess, hangLimit, startDaemonProcess } from "@outbox/test-kit";
import { describe, expect, it, vi } from "vitest";

// Its tests start a program: each start gets its hang limit, not the suite's default.
vi.setConfig({ testTimeout: hangLimit({ processStart: 1 }) });

const SLEEPY = "packages/shared/test/fixtures/sleepy-daemon.ts";

function startSleepy(env: Record<string, string>): DaemonProcess {
  return startDaemonProcess(SLEEPY, { LOG_LEVEL: "info", ...env });
}

/** The sleepy daemon refusing its configuration: its stderr lines (exit 78, nothing on stdout). */
const refuseSleepy = (env: Record<string, string>) => configRefusal(SLEEPY, { LOG_LEVEL: "info", ...env });

const dbUrl = "postgres://nobody:secret@127.0.0.1:1/unused";

describe("runDaemon in a real child process", () => {
  it("on SIGTERM finishes the job in flight, turns /readyz to 503 first, logs the stop in order and exits 0", async () => {
    const run = startSleepy({ DATABASE_URL: dbUrl, JOB_MS: "1500" });
    // The job may log its start before runDaemon logs "started" with the ops port: wait for both.
    await expect
      .poll(() => ["job started", "started"].every((msg) => run.lines.some((line) => line.msg === msg)), {
        timeout: 20_000,
      })
      .toBe(true);
    const port = run.lines.find((line) => line.msg === "started")?.opsPort as number;
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);

    run.child.kill("SIGTERM");
    await run.waitForLog("draining");
    // Still draining the job: the ops server is up and reports not-ready.
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(503);
    run.child.kill("SIGTERM"); // a second TERM is logged and ignored

    expect((await run.exited).code).toBe(0);
    const messages = run.lines.map((line) => line.msg);
    const order = [
      "timeout budget",
      "started",
      "stop requested",
      "draining",
      "job finished",
      "drained",
      "ops server closed",
      "database pool closed",
      "exit",
    ];
    const positions = order.map((msg) => messages.indexOf(msg));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(run.lines.find((line) => line.msg === "drained")).toMatchObject({ clean: true, jobs: 1 });
    expect(run.lines.find((line) => line.msg === "already stopping; signal ignored")).toMatchObject({
      signal: "SIGTERM",
    });
    expect(run.lines.find((line) => line.msg === "timeout budget")).toMatchObject({
      STOP_TIMEOUT_MS: 30_000,
      SLEEPY_DRAIN_TIMEOUT_MS: 20_000,
      SHUTDOWN_OVERHEAD_MS: 5_000,
      DB_STATEMENT_TIMEOUT_MS: 5_000,
    });
    await expect(fetch(`http://127.0.0.1:${port}/livez`)).rejects.toThrow();
  });

  it("gives up at the drain timeout with clean=false and still exits 0", async () => {
    const run = startSleepy({
      DATABASE_URL: dbUrl,
      JOB_MS: "30000",
      SLEEPY_DRAIN_TIMEOUT_MS: "300",
      DB_STATEMENT_TIMEOUT_MS: "200",
    });
    await expect
      .poll(() => run.lines.some((line) => line.msg === "job started"), { timeout: 20_000 })
      .toBe(true);
    run.child.kill("SIGTERM");
    expect((await run.exited).code).toBe(0);
    expect(run.lines.find((line) => line.msg === "drained")).toMatchObject({ clean: false, jobs: 0 });
  });

  it("exits 130 on a second SIGINT, naming what it abandoned", async () => {
    const run = startSleepy({ DATABASE_URL: dbUrl, JOB_MS: "30000" });
    await expect
      .poll(() => run.lines.some((line) => line.msg === "job started"), { timeout: 20_000 })
      .toBe(true);
    run.child.kill("SIGINT");
    await run.waitForLog("draining");
    run.child.kill("SIGINT");
    expect((await run.exited).code).toBe(130);
    expect(run.lines.find((line) => line.msg === "second SIGINT: exiting without draining")).toMatchObject({
      abandoned: { jobs: 1 },
    });
  });

  it("treats a SIGTERM that arrives while the daemon is still loading as a clean stop", async () => {
    const run = startSleepy({ DATABASE_URL: dbUrl, BOOT_MS: "1500", ANNOUNCE_BOOT: "1" });
    await expect.poll(() => run.stderr(), { timeout: 20_000 }).toContain("booting");
    run.child.kill("SIGTERM");
    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(run.lines.find((line) => line.msg === "stop requested")).toMatchObject({ signal: "SIGTERM" });
    expect(run.lines.find((line) => line.msg === "drained")).toMatchObject({ clean: true });
  });

  it("refuses bad config with exit 78 and exactly one line per problem, every problem, no stack trace", async () => {
    const lines = await refuseSleepy({
      DATABASE_URL: "",
      DB_POOL_MAX: "many",
      SLEEPY_DRAIN_TIMEOUT_MS: "29000",
    });
    // The budget is checked although two variables did not parse: one start-up shows all three.
    expect(lines).toEqual([
      "sleepy: config error: DATABASE_URL: is required",
      'sleepy: config error: DB_POOL_MAX: expected a whole number (got "many")',
      "sleepy: config error: SLEEPY_DRAIN_TIMEOUT_MS: 29000 ms + SHUTDOWN_OVERHEAD_MS (5000 ms) = 34000 ms must be less than STOP_TIMEOUT_MS (30000 ms): the drain must end before the platform's SIGKILL",
    ]);
    expect(lines.join("\n")).not.toMatch(/\bat \S+:\d+:\d+/);
  });

  it("refuses an inverted timeout hierarchy with exit 78", async () => {
    expect(await refuseSleepy({ DATABASE_URL: dbUrl, SLEEPY_DRAIN_TIMEOUT_MS: "29000" })).toEqual([
      "sleepy: config error: SLEEPY_DRAIN_TIMEOUT_MS: 29000 ms + SHUTDOWN_OVERHEAD_MS (5000 ms) = 34000 ms must be less than STOP_TIMEOUT_MS (30000 ms): the drain must end before the platform's SIGKILL",
    ]);
  });

  it("reads settings given in code over the environment, and refuses a key that is no setting (exit 78)", async () => {
    expect(
      await refuseSleepy({
        DATABASE_URL: dbUrl,
        SLEEPY_DRAIN_TIMEOUT_MS: "100",
        SETTINGS_IN_CODE: JSON.stringify({ SLEEPY_DRAIN_TIMEOUT_MS: 29_000, SLEEPY_DRAN_TIMEOUT_MS: 1 }),
      }),
    ).toEqual([
      "sleepy: config error: SLEEPY_DRAN_TIMEOUT_MS: is not a setting of this program (given in code)",
      "sleepy: config error: SLEEPY_DRAIN_TIMEOUT_MS: 29000 ms + SHUTDOWN_OVERHEAD_MS (5000 ms) = 34000 ms must be less than STOP_TIMEOUT_MS (30000 ms): the drain must end before the platform's SIGKILL",
    ]);
  });
});
