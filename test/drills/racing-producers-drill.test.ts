import { drillContext, runRacingProducers, testScale } from "@outbox/drills";
import { describe, expect, it } from "vitest";
import { useDrillStack } from "./drill-stack.js";

describe("racing-producers drill", () => {
  const drillStack = useDrillStack();

  it("32 producers on 8 keys with held transactions, a relay killed: no per-key inversion, every event once", async () => {
    const [result] = await runRacingProducers(
      drillContext(drillStack(), { scale: testScale, seed: 5, progress: () => {} }),
    );
    expect(result?.checks[0], result?.checks[0]?.result).toMatchObject({ pass: true });
    const figures = result?.figures as Record<string, number>;
    // The run raced: transactions held open, some rolled back, and every committed event in the outbox.
    expect(figures.held).toBeGreaterThan(0);
    expect(figures.rolledBack).toBeGreaterThan(0);
    expect(figures.outboxRows).toBe(figures.committedEvents);
  }, 180_000);
});
