import { drillContext, runChaos, runRollingRestart, testScale } from "@outbox/drills";
import { describe, expect, it } from "vitest";
import { useDrillStack } from "./drill-stack.js";

describe("restart series (two replicas of each daemon, steady traffic)", () => {
  const drillStack = useDrillStack();

  it("rolling restart with SIGTERM: lost 0, duplicate skips 0, every exit 0", async () => {
    const lines: string[] = [];
    const [result] = await runRollingRestart(
      drillContext(drillStack(), { scale: testScale, seed: 7, progress: (line) => lines.push(line) }),
    );
    expect(result?.checks[0], `${result?.checks[0]?.result}\n${lines.join("\n")}`).toMatchObject({
      pass: true,
    });
    const figures = result?.figures as {
      delivery: { duplicates: number };
      exits: { code: number }[];
      stopMs: number[];
    };
    expect(figures.delivery.duplicates).toBe(0);
    expect(figures.exits.every((exit) => exit.code === 0)).toBe(true);
    expect(figures.stopMs).toHaveLength(testScale.restarts * 2);
  }, 240_000);

  it("chaos with SIGKILLs, a Postgres restart and a bus outage: lost 0, effects exactly once", async () => {
    const lines: string[] = [];
    const [result] = await runChaos(
      drillContext(drillStack(), { scale: testScale, seed: 11, progress: (line) => lines.push(line) }),
    );
    expect(result?.checks[0], `${result?.checks[0]?.result}\n${lines.join("\n")}`).toMatchObject({
      pass: true,
    });
    const figures = result?.figures as { counts: { lost: number; effects: number; enqueued: number } };
    expect(figures.counts.lost).toBe(0);
    expect(figures.counts.effects).toBe(figures.counts.enqueued);
  }, 240_000);
});
