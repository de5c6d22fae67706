import { checkRestartDrain, drillContext, runSigkillDrill, testScale } from "@outbox/drills";
import { describe, expect, it } from "vitest";
import { useDrillStack } from "./drill-stack.js";

describe("sigkill drill (comparison)", () => {
  const drillStack = useDrillStack();

  it("shows the relay's re-sends and the inbox catching them, with effects exactly once", async () => {
    const [result] = await runSigkillDrill(
      drillContext(drillStack(), { scale: testScale, seed: 1, progress: () => {} }),
    );
    expect(result?.checks[0], result?.checks[0]?.result).toMatchObject({ pass: true });
    const figures = result?.figures as Record<string, number>;
    expect(figures.effects).toBe(150);
    expect(figures.inbox).toBe(150);
    expect(figures.relayResent).toBeGreaterThan(0);
    expect(figures.duplicates).toBeGreaterThan(0);

    // The restart-drain checker must not pass a hard-kill run: its duplicates are reported and fail it.
    const verdict = checkRestartDrain({
      expected: figures.enqueued ?? 0,
      inbox: figures.inbox ?? 0,
      effects: figures.effects ?? 0,
      duplicates: figures.duplicates ?? 0,
      queueDepth: figures.queue ?? 0,
      dlqDepth: figures.dlq ?? 0,
    });
    expect(verdict.pass).toBe(false);
    expect(verdict.result).toContain(`duplicate skips: ${figures.duplicates}`);
  }, 180_000);
});
