import { Deadline } from "@outbox/client";
import { describe, expect, it } from "vitest";
import { settlesBefore, settlesWithin, startPeriodic, untilAborted } from "../src/index.js";
import { capturedLogger } from "./fixtures/captured-logger.js";

const never = new Promise<never>(() => {});
const waitFor = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe("bounded waits", () => {
  it("settlesBefore tells work that ended from a deadline that came first", async () => {
    const deadline = Deadline.after(50);
    expect(await settlesBefore(Promise.resolve(), deadline)).toBe(true);
    expect(await settlesBefore(never, deadline)).toBe(false);
    expect(await settlesBefore(Promise.resolve(), deadline)).toBe(false);
    expect(await settlesWithin(never, 20)).toBe(false);
    expect(
      await settlesWithin(
        Promise.reject(new Error("failed")).catch(() => {}),
        20,
      ),
    ).toBe(true);
  });

  it("untilAborted rejects with the deadline's reason and otherwise settles as the work does", async () => {
    const parent = new AbortController();
    const deadline = Deadline.after(10_000, parent.signal);
    await expect(untilAborted(Promise.resolve(7), deadline)).resolves.toBe(7);
    const waiting = untilAborted(never, deadline);
    parent.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
    deadline.dispose();
  });
});

describe("startPeriodic", () => {
  it("runs first or waits an interval first, as asked", async () => {
    const { log } = capturedLogger();
    let first = 0;
    let later = 0;
    const runsFirst = startPeriodic(
      async () => {
        first += 1;
      },
      {
        intervalMs: 60_000,
        runFirst: true,
        log,
        failureMessage: "failed",
      },
    );
    const waitsFirst = startPeriodic(
      async () => {
        later += 1;
      },
      {
        intervalMs: 60_000,
        runFirst: false,
        log,
        failureMessage: "failed",
      },
    );
    await waitFor(() => first === 1);
    await Promise.all([runsFirst.stop(), waitsFirst.stop()]);
    expect(first).toBe(1);
    expect(later).toBe(0);
  });

  it("logs a failed pass and tries again; stop waits for the pass in flight", async () => {
    const { lines, log } = capturedLogger();
    let passes = 0;
    let finishedAfterStop = false;
    let releasePass = () => {};
    const periodic = startPeriodic(
      async (stopped) => {
        passes += 1;
        if (passes === 1) throw new Error("database away");
        await new Promise<void>((resolve) => {
          releasePass = resolve;
        });
        finishedAfterStop = stopped.aborted;
      },
      { intervalMs: 1, runFirst: true, log, failureMessage: "pass failed; retrying" },
    );
    await waitFor(() => passes === 2);
    const stopped = periodic.stop();
    releasePass();
    await stopped;
    expect(finishedAfterStop).toBe(true);
    expect(passes).toBe(2);
    expect(lines).toContainEqual(expect.objectContaining({ level: "warn", msg: "pass failed; retrying" }));
  });
});
