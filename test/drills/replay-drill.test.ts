import { drillContext, runReplayDrill, testScale } from "@outbox/drills";
import { describe, expect, it } from "vitest";
import { useDrillStack } from "./drill-stack.js";

describe("replay drill", () => {
  const drillStack = useDrillStack();

  it("republishes every published event: the consumer counts each as a duplicate, no effect twice", async () => {
    const [result] = await runReplayDrill(
      drillContext(drillStack(), { scale: testScale, seed: 1, progress: () => {} }),
    );
    expect(result?.checks[0], result?.checks[0]?.result).toMatchObject({ pass: true });
    const figures = result?.figures as Record<string, number>;
    expect(figures.replayed).toBe(testScale.events);
    expect(figures.duplicates).toBe(testScale.events);
    expect(figures.effectsAfter).toBe(figures.effectsBefore);
    expect(figures.republishExit).toBe(0);
  }, 180_000);
});
