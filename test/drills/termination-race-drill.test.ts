import { drillContext, runTerminationRace, testScale } from "@outbox/drills";
import { describe, expect, it } from "vitest";
import { useDrillStack } from "./drill-stack.js";

describe("termination-race drill", () => {
  const drillStack = useDrillStack();

  it("loses requests without a preStop and none with one covering the propagation, as the simulator predicts", async () => {
    const [result] = await runTerminationRace(
      drillContext(drillStack(), { scale: testScale, seed: 1, progress: () => {} }),
    );
    if (!result) throw new Error("the drill returned no result");
    expect(result.checks[0], result.checks[0]?.result).toMatchObject({ pass: true });
    const { runs } = result.figures as { runs: { preStopMs: number; measured: number; exitCode: number }[] };
    expect(runs.map((run) => run.preStopMs)).toEqual([0, 3_000]);
    expect(runs[0]?.measured).toBeGreaterThan(0);
    expect(runs[1]?.measured).toBe(0);
    expect(runs.map((run) => run.exitCode)).toEqual([0, 0]);
  }, 180_000);
});
