import { drillContext, runStopDrill, testScale } from "@outbox/drills";
import { describe, expect, it } from "vitest";
import { useDrillStack } from "./drill-stack.js";

describe("stop drill (real relay and consumer processes)", () => {
  const drillStack = useDrillStack();

  it("reproduces the source document's rows: published=100 unsent=50, handlers finish, 150/150 with 0 duplicates", async () => {
    const lines: string[] = [];
    const results = await runStopDrill(
      drillContext(drillStack(), { scale: testScale, seed: 1, progress: (line) => lines.push(line) }),
    );
    const byScenario = Object.fromEntries(results.map((result) => [result.scenario, result]));
    expect(byScenario["relay-sigterm"]?.figures).toMatchObject({
      published: 100,
      unsent: 50,
      clean: true,
      exitCode: 0,
    });
    expect(byScenario["restart-drain"]?.figures).toMatchObject({
      inbox: 150,
      effects: 150,
      duplicates: 0,
      queue: 0,
      dlq: 0,
    });
    for (const result of results) {
      for (const check of result.checks)
        expect(check, `${check.check}: ${check.result}`).toMatchObject({ pass: true });
    }
  }, 180_000);
});
