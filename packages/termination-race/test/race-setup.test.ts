import { describe, expect, it } from "vitest";
import { runDemoCell } from "../src/demo-grid.js";
import { explainRun } from "../src/race-explanation.js";
import { DEFAULT_SETUP, recommendFor, runSetup, setupProblem } from "../src/race-setup.js";
import { renderTimeline } from "../src/timeline-text.js";

/** pod-1's state in every tick, one character each, as the timeline draws it. */
function statesOf(run: ReturnType<typeof runSetup>, replica = 0): string {
  return renderTimeline(run.frames)[2 + replica]?.slice(13) ?? "";
}

describe("a setup to play with", () => {
  it("starts at the document's headline and gives its numbers: 48 served, 8 dropped", () => {
    const run = runSetup(DEFAULT_SETUP);
    expect(runDemoCell(0, 10).counts).toEqual(run.counts);
    expect(run.counts).toMatchObject({ served: 48, dropped: 8, refused: 8 });
    expect(run.ticks).toBe(16);
  });

  it("records every tick: pod-1 refusing from SIGTERM (t=1) until its removal (t=5), 2 refused in each", () => {
    const run = runSetup(DEFAULT_SETUP);
    expect(run.frames.map((frame) => frame.at)).toEqual([...Array(16).keys()]);
    const pod1 = run.frames.map((frame) => frame.replicas[0]);
    expect(pod1.map((tick) => tick?.state)).toEqual([
      "serving",
      ...Array(4).fill("refusing"),
      ...Array(11).fill("gone"),
    ]);
    expect(pod1.map((tick) => tick?.refused)).toEqual([0, 2, 2, 2, 2, ...Array(11).fill(0)]);
    expect(run.frames.every((frame) => frame.replicas[1]?.state === "serving")).toBe(true);
    // The frames add up to the counts.
    const sum = (pick: (tick: NonNullable<(typeof pod1)[number]>) => number) =>
      run.frames.flatMap((frame) => frame.replicas).reduce((total, tick) => total + pick(tick), 0);
    expect(sum((tick) => tick.served)).toBe(run.counts.served);
    expect(sum((tick) => tick.refused + tick.cut)).toBe(run.counts.dropped);
  });

  it("closes the window with a preStop that covers the propagation: pod-1 leaves the list, then drains", () => {
    const run = runSetup({ ...DEFAULT_SETUP, preStop: 4 });
    expect(run.counts).toMatchObject({ served: 56, dropped: 0 });
    expect(statesOf(run)).toBe("=====~~.........");
    expect(explainRun(run)).toMatch(/^0 dropped, 56 served: the replica left the target list before SIGTERM/);
  });

  it("explains the headline's drops by the window between SIGTERM and the removal", () => {
    expect(explainRun(runSetup(DEFAULT_SETUP))).toBe(
      "8 dropped, 48 served: 8 refused in 4 ticks: pod-1 stayed on the target list from SIGTERM at t=1 to its removal at t=5 (a preStop of at least the propagation, 4, closes that window)",
    );
  });

  it("counts the Kubernetes grace from the deletion: a preStop that outlives it moves SIGTERM to the grace", () => {
    const run = runSetup({ ...DEFAULT_SETUP, preStop: 4, grace: 2 });
    expect(run.schedule).toEqual({ removeAfter: 4, sigtermAfter: 2, killAfter: 4 });
    expect(run.counts.refused).toBe(4);
    expect(explainRun(run)).toContain("the preStop 4 outlives the grace 2");
  });

  it("runs the document's model too: the grace counts from SIGTERM, so preStop 4 / grace 1 cuts 2 by SIGKILL", () => {
    const document = { ...DEFAULT_SETUP, platform: "document" as const };
    const run = runSetup({ ...document, preStop: 4, grace: 1 });
    expect(run.schedule).toEqual({ removeAfter: 4, sigtermAfter: 4, killAfter: 5 });
    expect(run.counts).toMatchObject({ served: 54, dropped: 2, refused: 0, cutBySigkill: 2 });
    expect(explainRun(run)).toBe(
      "2 dropped, 54 served: 2 cut by SIGKILL (the grace 1 counts from SIGTERM, the work takes 3)",
    );
    // The same numbers in Kubernetes' order move SIGTERM to the grace instead: refusals, no cut.
    expect(runSetup({ ...run.setup, platform: "k8s" }).counts).toMatchObject({
      served: 50,
      refused: 6,
      cutBySigkill: 0,
    });
  });

  it("cuts work in flight when SIGKILL comes before the work ends", () => {
    // SIGTERM at t=5, SIGKILL at t=6: the 2 requests routed at t=4 still have a tick to run.
    const run = runSetup({ ...DEFAULT_SETUP, preStop: 4, grace: 5 });
    expect(run.counts.cutBySigkill).toBe(2);
    expect(explainRun(run)).toContain(
      "2 cut by SIGKILL (the grace 5 counts from the deletion and holds the preStop 4: 1 left after SIGTERM, the work takes 3)",
    );
  });

  it("always drops with one replica: the list is empty once it has left", () => {
    const run = runSetup({ ...DEFAULT_SETUP, replicas: 1, preStop: 4 });
    expect(run.counts.refused).toBe(0);
    expect(run.counts.unroutable).toBeGreaterThan(0);
    expect(renderTimeline(run.frames).at(-1)).toMatch(/^no endpoint {2}\s+4{11}$/);
    expect(explainRun(run)).toContain("with no endpoint left");
  });

  it("runs the ECS order: a delay shorter than propagation plus work has the ALB cut requests", () => {
    const ecs = { ...DEFAULT_SETUP, platform: "ecs" as const };
    const short = runSetup({ ...ecs, preStop: 5, grace: 10 });
    expect(short.counts.cutByLoadBalancer).toBe(2);
    expect(explainRun(short)).toContain("cut by the load balancer");
    expect(runSetup({ ...ecs, preStop: 2, grace: 10 }).counts.refused).toBeGreaterThan(0);
    expect(runSetup({ ...ecs, preStop: 7, grace: 10 }).counts.dropped).toBe(0);
  });

  it("recommends the planner's numbers, one tick read as one second, and they drop nothing", () => {
    const k8s = recommendFor(DEFAULT_SETUP);
    expect(k8s.setup).toMatchObject({ preStop: 4, grace: 4 + 3 + 5 });
    expect(k8s.plan.problems).toEqual([]);
    expect(runSetup(k8s.setup).counts.dropped).toBe(0);
    const ecs = recommendFor({ ...DEFAULT_SETUP, platform: "ecs" });
    expect(ecs.setup).toMatchObject({ preStop: 4 + 3, grace: 3 + 5 });
    expect(runSetup(ecs.setup).counts.dropped).toBe(0);
    // The document's model gets the same stop: Kubernetes' grace less the preStop, after SIGTERM.
    const document = recommendFor({ ...DEFAULT_SETUP, platform: "document" });
    expect(document.setup).toMatchObject({ preStop: 4, grace: 3 + 5 });
    expect(runSetup(document.setup).schedule).toEqual(runSetup(k8s.setup).schedule);
    expect(runSetup(document.setup).counts.dropped).toBe(0);
    const single = recommendFor({ ...DEFAULT_SETUP, replicas: 1 });
    expect(single.plan.problems.join()).toContain("with 1 replica");
  });

  it("names the first number out of its bounds", () => {
    expect(setupProblem(DEFAULT_SETUP)).toBeUndefined();
    expect(setupProblem({ ...DEFAULT_SETUP, replicas: 0 })).toBe(
      "replicas must be a whole number from 1 to 8, got 0",
    );
    expect(setupProblem({ ...DEFAULT_SETUP, work: 2.5 })).toContain("work must be a whole number");
    expect(setupProblem({ ...DEFAULT_SETUP, platform: "nomad" as "k8s" })).toBe(
      'platform must be k8s, document or ecs, got "nomad"',
    );
  });
});
