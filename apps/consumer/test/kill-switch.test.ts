import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { IntakeGate } from "../src/loop/intake-gate.js";
import { KillSwitch } from "../src/loop/kill-switch.js";
import { createConsumerMetrics } from "../src/metrics.js";
import { testLogger } from "./harness.js";

// The kill switch on its own: the gate it holds, the trial it offers, the retry floor of a trial.

function killSwitch(stopping: AbortSignal) {
  const gate = new IntakeGate();
  const sw = new KillSwitch({
    tripPercent: 50,
    activityThreshold: 4,
    windowMs: 60_000,
    restartMs: 2_000,
    restartMaxMs: 8_000,
    gate,
    stopping,
    log: testLogger(),
    metrics: createConsumerMetrics(new Registry()),
  });
  return { gate, sw };
}

describe("the kill switch", () => {
  it("trips on the window's share of failures, offers one trial after the pause, keeps a failed trial's message away for the next pause", async () => {
    const stop = new AbortController();
    const { gate, sw } = killSwitch(stop.signal);
    try {
      // Poison and released say nothing of a dependency; 1 of 3 judged failed is under 50 %.
      for (const result of ["poison", "released", "processed", "processed", "failed"] as const)
        sw.record(result);
      expect(gate.isOpen).toBe(true);
      sw.record("failed");
      expect(gate.pausedBy()).toEqual(["kill switch"]);
      expect(sw.retryFloorSeconds()).toBe(0);

      // After the pause (1–2 s with jitter) one poller gets the trial, and only one.
      const first = await gate.admit(stop.signal);
      expect(first).toBe("trial");
      const second = gate.admit(stop.signal);
      // While the trial is out, a message failing waits out the longest next pause: 2 s doubled.
      expect(sw.retryFloorSeconds()).toBe(4);
      sw.record("failed");
      expect(sw.counts().killSwitchTrips).toBe(2);
      expect(sw.retryFloorSeconds()).toBe(0);
      // The second trial, after the longer pause: handled, and intake opens to everyone.
      expect(await second).toBe("trial");
      sw.record("processed");
      expect(gate.isOpen).toBe(true);
      expect(await gate.admit(stop.signal)).toBe("open");
    } finally {
      stop.abort();
    }
  }, 20_000);

  it("gives the trial back when its receive brought nothing to judge by", async () => {
    const stop = new AbortController();
    const gate = new IntakeGate();
    gate.close("kill switch");
    gate.offerTrial();
    expect(await gate.admit(stop.signal)).toBe("trial");
    const next = gate.admit(stop.signal);
    gate.returnTrial();
    expect(await next).toBe("trial");
    // While the database is away too, no trial: it would prove nothing.
    gate.returnTrial();
    gate.close("database unreachable");
    const waiting = gate.admit(stop.signal);
    stop.abort();
    expect(await waiting).toBe("stopped");
  });
});
