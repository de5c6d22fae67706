import {
  drillContext,
  runDeadlineDrill,
  runHttpStopDrill,
  runPhotoChain,
  runSlowDependencyDrill,
  testScale,
} from "@outbox/drills";
import { describe, expect, it } from "vitest";
import { useDrillStack } from "./drill-stack.js";

// The photo service's rows as `pnpm drill` runs them: real api processes, a real equipment stub.
// The checkers bound the figures (answered well before the 10 s client timeout, the stub's value
// between 3 000 minus the time seen upstream and 3 000), so a loaded machine does not fail them.
describe("photo service drills (real api processes)", () => {
  const drillStack = useDrillStack();
  const context = () => drillContext(drillStack(), { scale: testScale, seed: 1, progress: () => {} });

  it("SIGTERM: 8 requests held before their commit all answer 201 and commit; SIGKILL cuts all 8", async () => {
    const results = await runHttpStopDrill(context());
    expect(results.map((result) => result.scenario)).toEqual(["http-sigterm", "http-sigkill"]);
    for (const result of results) {
      for (const check of result.checks)
        expect(check, `${check.check}: ${check.result}`).toMatchObject({ pass: true });
    }
    expect(results[0]?.figures).toMatchObject({ committedPhotos: 8, committedEvents: 8 });
  }, 120_000);

  it("deadline: the caller's 3 000 ms bound the call, and the stub received what was left of them", async () => {
    const [result] = await runDeadlineDrill(context());
    const check = result?.checks[0];
    expect(check, `${check?.check}: ${check?.result}`).toMatchObject({ pass: true });
    expect(Number(result?.figures.stubReceivedMs)).toBeLessThanOrEqual(3_000);
  }, 60_000);

  it("slow dependency: 201 with the link pending after the client's 10 s, then linked once by reconciliation", async () => {
    const [result] = await runSlowDependencyDrill(context());
    const check = result?.checks[0];
    expect(check, `${check?.check}: ${check?.result}`).toMatchObject({ pass: true });
    expect(result?.figures).toMatchObject({ status: 201 });
  }, 120_000);

  it("photo chain: every post's event applied exactly once under a rolling restart of api, relay and consumer", async () => {
    const [result] = await runPhotoChain(context());
    const check = result?.checks[0];
    expect(check, `${check?.check}: ${check?.result}`).toMatchObject({ pass: true });
    expect(Number(result?.figures.posts)).toBeGreaterThan(0);
    expect(result?.figures).toMatchObject({ lost: 0, duplicates: 0 });
  }, 240_000);
});
