import { describe, expect, it } from "vitest";
import { DEMO } from "../src/demo.js";
import { demoGrid, runDemoCell } from "../src/demo-grid.js";
import { TerminationRace } from "../src/race.js";
import { runRace } from "../src/run-race.js";
import { documentSchedule, type RaceConfig } from "../src/stop-schedule.js";

function demoWith(config: Partial<RaceConfig>, replicas: number = DEMO.replicas) {
  const full: RaceConfig = {
    propagation: DEMO.propagation,
    preStop: 0,
    grace: 10,
    work: DEMO.work,
    ...config,
  };
  return runRace({
    workload: { work: full.work },
    schedule: documentSchedule(full),
    replicas,
    requestsPerTick: DEMO.requestsPerTick,
    stopAt: DEMO.stopAt,
    ticks: DEMO.ticks,
  }).counts;
}

describe("the source document's demo", () => {
  it("gives 48 served and 8 dropped with preStop 0 and grace 10", () => {
    const cell = runDemoCell(0, 10);
    expect(cell.counts.served).toBe(48);
    expect(cell.counts.dropped).toBe(8);
    expect(cell.counts.refused).toBe(8);
  });

  it("prints the same story as the document's log: SIGTERM at once, refused until the removal lands", () => {
    const { log } = runDemoCell(0, 10);
    expect(log.map((entry) => `t=${entry.at} ${entry.replica} ${entry.event.kind}`)).toEqual([
      "t=1 pod-1 stop-begins",
      "t=1 pod-1 sigterm",
      "t=1 pod-1 refused",
      "t=1 pod-1 refused",
      "t=2 pod-1 refused",
      "t=2 pod-1 refused",
      "t=3 pod-1 drained",
      "t=3 pod-1 refused",
      "t=3 pod-1 refused",
      "t=4 pod-1 refused",
      "t=4 pod-1 refused",
    ]);
    expect(log[0]?.event).toEqual({ kind: "stop-begins", removeAt: 5, sigtermAt: 1 });
    expect(log[1]?.event).toEqual({ kind: "sigterm", inFlight: 2 });
  });

  it("fills the whole preStop × grace grid", () => {
    const grid = demoGrid().map((cell) => [
      cell.preStop,
      cell.grace,
      cell.counts.served,
      cell.counts.dropped,
    ]);
    expect(grid).toEqual([
      [0, 1, 46, 10],
      [0, 10, 48, 8],
      [2, 1, 50, 6],
      [2, 10, 52, 4],
      [4, 1, 54, 2],
      [4, 10, 56, 0],
    ]);
  });

  it("fills Kubernetes' grid, where a grace of 1 no longer cuts work but moves SIGTERM (2 of the 6 cells differ)", () => {
    const summary = (cell: ReturnType<typeof runDemoCell>) =>
      `${cell.preStop}/${cell.grace}: ${cell.counts.served} served, ${cell.counts.refused} refused, ${cell.counts.cutBySigkill} cut`;
    expect(demoGrid("k8s").map(summary)).toEqual([
      "0/1: 46 served, 8 refused, 2 cut",
      "0/10: 48 served, 8 refused, 0 cut",
      "2/1: 50 served, 6 refused, 0 cut",
      "2/10: 52 served, 4 refused, 0 cut",
      "4/1: 50 served, 6 refused, 0 cut",
      "4/10: 56 served, 0 refused, 0 cut",
    ]);
    const differ = demoGrid("k8s").filter(
      (cell, index) => JSON.stringify(cell.counts) !== JSON.stringify(demoGrid("document")[index]?.counts),
    );
    expect(differ.map((cell) => `${cell.preStop}/${cell.grace}`)).toEqual(["2/1", "4/1"]);
  });

  it("is deterministic: the same run twice gives the same counts and the same log", () => {
    expect(runDemoCell(2, 1)).toEqual(runDemoCell(2, 1));
  });
});

describe("the document's claims", () => {
  it("drops fewer and fewer requests as preStop goes from 0 to half the propagation to all of it", () => {
    const [none, half, full] = [0, DEMO.propagation / 2, DEMO.propagation].map(
      (preStop) => demoWith({ preStop }).dropped,
    );
    expect(none).toBeGreaterThan(half ?? 0);
    expect(half).toBeGreaterThan(full ?? 0);
    expect(full).toBe(0);
  });

  it("cuts work in flight when the grace is shorter than the work, and none when it is long enough", () => {
    const short = demoWith({ preStop: DEMO.propagation, grace: 1 });
    const enough = demoWith({ preStop: DEMO.propagation, grace: DEMO.work });
    expect(short.cutBySigkill).toBeGreaterThan(0);
    expect(short.drainsCut).toBe(1);
    expect(short.refused).toBe(0);
    expect(enough.cutBySigkill).toBe(0);
    expect(enough.dropped).toBe(0);
  });

  it("never fixes one loss by lengthening the other setting", () => {
    // A longer grace does not stop the refusals of a missing preStop…
    for (const grace of [10, 100, 1000]) expect(demoWith({ preStop: 0, grace }).refused).toBe(8);
    // …and no preStop of the demo saves the work a short grace cuts.
    for (const preStop of DEMO.preStops) expect(demoWith({ preStop, grace: 1 }).cutBySigkill).toBe(2);
  });

  it("always drops with a single replica: the endpoint list becomes empty", () => {
    const counts = demoWith({ preStop: 100, grace: 100 }, 1);
    expect(counts.refused).toBe(0);
    expect(counts.unroutable).toBeGreaterThan(0);
    expect(counts.dropped).toBe(counts.unroutable);
  });
});

describe("the simulator's rules", () => {
  it("applies a SIGTERM due now before routing the tick's requests", () => {
    const race = new TerminationRace({ work: 3 }, 2);
    race.terminate("pod-1", { removeAfter: 4, sigtermAfter: 0, killAfter: 10 });
    race.tick(2);
    expect(race.result.refused).toBe(1);
  });

  it("keeps a stopped replica on the endpoint list until its removal lands", () => {
    const race = new TerminationRace({ work: 1 }, 2);
    race.terminate("pod-1", { removeAfter: 3, sigtermAfter: 0, killAfter: 0 });
    race.tick(0);
    expect(race.log.map((entry) => entry.event.kind)).toContain("drained");
    expect(race.endpoints()).toEqual(["pod-1", "pod-2"]);
    race.tick(0);
    race.tick(0);
    expect(race.endpoints()).toEqual(["pod-2"]);
  });

  it("lets the app's own drain timeout give up on work before SIGKILL would", () => {
    const race = new TerminationRace({ work: 10, drain: 2 }, 2);
    race.tick(2);
    race.terminate("pod-1", { removeAfter: 0, sigtermAfter: 0, killAfter: 5 });
    for (let t = 0; t < 6; t++) race.tick(0);
    expect(race.result.abandonedByDrain).toBe(1);
    expect(race.result.cutBySigkill).toBe(0);
    expect(race.result.drainsCut).toBe(0);
  });

  it("cuts what the load balancer still carries when it closes the connections", () => {
    const race = new TerminationRace({ work: 10 }, 2);
    race.tick(2);
    race.terminate("pod-1", { removeAfter: 0, disconnectAfter: 1, sigtermAfter: 1, killAfter: 20 });
    race.tick(0);
    race.tick(0);
    expect(race.result.cutByLoadBalancer).toBe(1);
    expect(race.result.cutBySigkill).toBe(0);
  });

  it("ignores a stop of a replica that is not running", () => {
    const race = new TerminationRace({ work: 1 }, 1);
    race.terminate("pod-9", { removeAfter: 0, sigtermAfter: 0, killAfter: 0 });
    expect(race.log).toEqual([]);
  });
});
