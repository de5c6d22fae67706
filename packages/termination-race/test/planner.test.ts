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
    expect(result.problems).toEqual([]);
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

  it("fails when the stop needs more than Fargate's maximum stopTimeout, naming the longest drain that fits", () => {
    const long = plan({ platform: "ecs", ...app, drainMs: 118_000 });
    expect(long.recommended).toMatchObject({ stopTimeoutSeconds: 123 });
    // The simulator alone would call it a success: it is the platform that refuses it.
    expect(long.outcomes.recommended.requests.dropped).toBe(0);
    expect(long.problems).toEqual([
      `the stop needs a stopTimeout of 123 s, above Fargate's maximum of ${FARGATE_MAX_STOP_TIMEOUT_SECONDS} s: shorten the app's drain to 115 s or less`,
    ]);
    expect(plan({ platform: "ecs", ...app, drainMs: 115_000 }).problems).toEqual([]);
  });
});

describe("the fleet", () => {
  it("simulates the replicas it is given: more replicas, a smaller share refused by the one stopping", () => {
    const three = plan({ platform: "k8s", ...app, traffic: { replicas: 4, requestsPerTick: 2 } });
    expect(three.traffic?.replicas).toBe(4);
    expect(three.outcomes.given.requests.refused).toBeLessThan(
      plan({ platform: "k8s", ...app }).outcomes.given.requests.refused,
    );
    expect(three.problems).toEqual([]);
  });

  it("fails with a single replica: no settings keep the endpoint list from emptying", () => {
    const single = plan({ platform: "k8s", ...app, traffic: { replicas: 1, requestsPerTick: 2 } });
    expect(single.outcomes.recommended.requests.unroutable).toBeGreaterThan(0);
    expect(single.problems).toEqual([
      "with 1 replica the endpoint list is empty while it stops, whatever the settings: run at least 2",
    ]);
  });
});

describe("the worker plan (the relay, the consumer: no load balancer)", () => {
  it("on ECS: only a stopTimeout, the drain plus the margin, and no target group", () => {
    const worker = plan({ platform: "ecs", mode: "worker", drainMs: 25_000 });
    expect(worker.mode).toBe("worker");
    expect(worker.recommended).toEqual({ platform: "ecs", stopTimeoutSeconds: 30 });
    expect(worker.reasons.map((r) => r.setting)).toEqual(["stopTimeout"]);
    expect(worker.outcomes.recommended).toMatchObject({ drainsCut: 0, requests: { dropped: 0 } });
    expect(worker.problems).toEqual([]);
    expect(worker.traffic).toBeUndefined();
  });

  it("on Kubernetes: no preStop, the grace is the drain plus the margin, as the relay's manifest says", () => {
    const worker = plan({ platform: "k8s", mode: "worker", drainMs: 25_000 });
    expect(worker.recommended).toEqual({
      platform: "k8s",
      preStopSeconds: 0,
      terminationGracePeriodSeconds: 30,
    });
    // The same numbers as a service with nothing to wait out and no request longer than the drain.
    expect(
      plan({ platform: "k8s", propagationMs: 0, longestRequestMs: 25_000, drainMs: 25_000 }).recommended,
    ).toEqual(worker.recommended);
  });

  it("predicts the cut drain of a stopTimeout below the drain, and fails past Fargate's maximum", () => {
    const short = plan({
      platform: "ecs",
      mode: "worker",
      drainMs: 35_000,
      given: { platform: "ecs", stopTimeoutSeconds: 30 },
    });
    expect(short.outcomes.given.drainsCut).toBe(1);
    expect(short.outcomes.given.requests.cutBySigkill).toBeGreaterThan(0);
    expect(short.outcomes.recommended.drainsCut).toBe(0);
    expect(plan({ platform: "ecs", mode: "worker", drainMs: 116_000 }).problems.join()).toContain(
      "shorten the app's drain to 115 s or less",
    );
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
