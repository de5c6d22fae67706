import { describe, expect, it } from "vitest";
import { renderPlan } from "../src/plan-text.js";
import { plan } from "../src/planner.js";
import { simulateStop } from "../src/simulate-stop.js";
import { FARGATE_MAX_STOP_TIMEOUT_SECONDS } from "../src/stop-settings.js";

const app = { propagationMs: 5_000, longestRequestMs: 10_000, drainMs: 25_000 };

describe("the Kubernetes plan", () => {
  const result = plan({ platform: "k8s", ...app });

  it("waits out the propagation in preStop and fits preStop, drain and margin in the grace", () => {
    expect(result.recommended).toEqual({
      platform: "k8s",
      preStopSeconds: 5,
      terminationGracePeriodSeconds: 35,
    });
    expect(result.reasons.map((r) => [r.setting, r.seconds])).toEqual([
      ["preStop (sleep)", 5],
      ["terminationGracePeriodSeconds", 35],
    ]);
    for (const reason of result.reasons) expect(reason.reason).not.toMatch(/\n/);
  });

  it("drops nothing with the recommended settings, and the defaults' refusals beside them", () => {
    expect(result.givenIsDefault).toBe(true);
    expect(result.outcomes.recommended.requests.dropped).toBe(0);
    expect(result.outcomes.recommended.drainsCut).toBe(0);
    // 5 s of a 10-per-second share refused: SIGTERM at once, routed for the whole propagation.
    expect(result.outcomes.given.requests.refused).toBe(50);
  });

  it("asks for a longer app drain when it is shorter than the longest request", () => {
    const short = plan({ platform: "k8s", ...app, drainMs: 4_000 });
    expect(short.reasons.find((r) => r.setting === "app drain timeout")?.seconds).toBe(10);
    expect(short.recommended).toMatchObject({ terminationGracePeriodSeconds: 5 + 10 + 5 });
    expect(short.outcomes.given.requests.abandonedByDrain).toBeGreaterThan(0);
    expect(short.outcomes.recommended.requests.dropped).toBe(0);
  });

  it("shows the drops of the settings in use", () => {
    const given = plan({
      platform: "k8s",
      ...app,
      given: { platform: "k8s", preStopSeconds: 5, terminationGracePeriodSeconds: 12 },
    });
    expect(given.givenIsDefault).toBe(false);
    expect(given.outcomes.given.requests.refused).toBe(0);
    expect(given.outcomes.given.requests.cutBySigkill).toBeGreaterThan(0);
    expect(given.outcomes.given.drainsCut).toBe(1);
  });
});

describe("the ECS plan", () => {
  const result = plan({ platform: "ecs", ...app });

  it("covers propagation and the longest request with the delay, and the drain with stopTimeout", () => {
    expect(result.recommended).toEqual({
      platform: "ecs",
      deregistrationDelaySeconds: 15,
      stopTimeoutSeconds: 30,
    });
    expect(result.warnings).toEqual([]);
    expect(result.outcomes.recommended).toEqual({
      requests: expect.objectContaining({ dropped: 0 }),
      drainsCut: 0,
    });
  });

  it("predicts the drops of a short delay and a stopTimeout below the drain", () => {
    const outcome = simulateStop(
      { platform: "ecs", deregistrationDelaySeconds: 5, stopTimeoutSeconds: 20 },
      app,
    );
    expect(outcome.requests.cutByLoadBalancer).toBeGreaterThan(0);
    expect(outcome.drainsCut).toBe(1);
    const early = simulateStop(
      { platform: "ecs", deregistrationDelaySeconds: 2, stopTimeoutSeconds: 30 },
      app,
    );
    expect(early.requests.refused).toBeGreaterThan(0);
  });

  it("warns when the stop needs more than Fargate's maximum stopTimeout", () => {
    const long = plan({ platform: "ecs", ...app, drainMs: 118_000 });
    expect(long.recommended).toMatchObject({ stopTimeoutSeconds: 123 });
    expect(long.warnings.join()).toContain(`maximum of ${FARGATE_MAX_STOP_TIMEOUT_SECONDS} s`);
  });
});

describe("the printed plan", () => {
  it("gives every recommended number with its reason, and both simulations", () => {
    const text = renderPlan(plan({ platform: "k8s", ...app }));
    expect(text).toMatch(/preStop \(sleep\)\s+5 s {2}SIGTERM must wait/);
    expect(text).toMatch(/terminationGracePeriodSeconds\s+35 s {2}it counts from the deletion/);
    expect(text).toContain(
      "| given (platform defaults): preStop 0 s, terminationGracePeriodSeconds 30 | dropped 50 (50 refused) | 0 |",
    );
    expect(text).toContain("| recommended: preStop 5 s, terminationGracePeriodSeconds 35 | dropped 0 | 0 |");
  });
});
