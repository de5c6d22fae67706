import { describe, expect, it } from "vitest";
import { runRace } from "../src/run-race.js";
import {
  ecsBehindAlbSchedule,
  ecsWorkerSchedule,
  kubernetesSchedule,
  type StopSchedule,
} from "../src/stop-schedule.js";

/** Steady traffic, 2 replicas, work 3 ticks, pod-1 stopped once the fleet is busy. */
function stopUnder(schedule: StopSchedule) {
  return runRace({
    workload: { work: 3 },
    schedule,
    replicas: 2,
    requestsPerTick: 2,
    stopAt: 3,
    ticks: 60,
  }).counts;
}

describe("Kubernetes", () => {
  const k8s = (preStop: number, terminationGracePeriod: number) =>
    kubernetesSchedule({ propagation: 4, preStop, terminationGracePeriod, hookOverrunExtension: 2 });

  it("starts the endpoint removal and the preStop wait together", () => {
    expect(k8s(0, 30)).toEqual({ removeAfter: 4, sigtermAfter: 0, killAfter: 30 });
    expect(stopUnder(k8s(0, 30)).refused).toBeGreaterThan(0);
    expect(stopUnder(k8s(4, 30)).dropped).toBe(0);
  });

  it("counts the grace from the deletion, so a preStop eats into the drain", () => {
    expect(k8s(4, 6)).toEqual({ removeAfter: 4, sigtermAfter: 4, killAfter: 6 });
    expect(stopUnder(k8s(4, 5)).cutBySigkill).toBeGreaterThan(0);
    expect(stopUnder(k8s(4, 6)).cutBySigkill).toBe(0);
  });

  it("sends SIGTERM when a preStop outlives the grace, and SIGKILL after the one-off extension", () => {
    expect(k8s(40, 30)).toEqual({ removeAfter: 4, sigtermAfter: 30, killAfter: 32 });
  });
});

describe("ECS behind an ALB", () => {
  const ecs = (deregistrationDelay: number, stopTimeout: number) =>
    ecsBehindAlbSchedule({ propagation: 4, deregistrationDelay, stopTimeout });

  it("sends the stop signal only when the deregistration delay ends, with the ALB's disconnect", () => {
    expect(ecs(10, 30)).toEqual({ removeAfter: 4, disconnectAfter: 10, sigtermAfter: 10, killAfter: 40 });
  });

  it("refuses requests when the delay is shorter than the propagation", () => {
    expect(stopUnder(ecs(2, 30)).refused).toBeGreaterThan(0);
  });

  it("cuts requests still running when the delay ends, and none when it covers propagation and work", () => {
    expect(stopUnder(ecs(4, 30)).cutByLoadBalancer).toBeGreaterThan(0);
    expect(stopUnder(ecs(7, 30)).dropped).toBe(0);
  });
});

describe("an ECS worker with no load balancer", () => {
  it("stops its own intake at SIGTERM and is killed stopTimeout later", () => {
    expect(ecsWorkerSchedule({ stopTimeout: 30 })).toEqual({
      removeAfter: 0,
      sigtermAfter: 0,
      killAfter: 30,
    });
    expect(stopUnder(ecsWorkerSchedule({ stopTimeout: 1 })).drainsCut).toBe(1);
    expect(stopUnder(ecsWorkerSchedule({ stopTimeout: 3 })).dropped).toBe(0);
  });
});
