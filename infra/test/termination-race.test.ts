import { simulateDrainWindow, simulateStop } from "@outbox/termination-race";
import { describe, expect, it } from "vitest";
import { apiBudget } from "../lib/budget.js";
import { type ContainerDefinition, container, environmentOf, synth } from "./support/synth.js";

const { template } = synth();

function stopTimeoutMsOf(definition: ContainerDefinition): number {
  if (definition.StopTimeout === undefined) throw new Error(`${definition.Name} has no stopTimeout`);
  return definition.StopTimeout * 1000;
}

/** A number the task definition passes to the daemon, as the daemon will read it; `fallback` when unset. */
function environmentNumber(definition: ContainerDefinition, name: string, fallback?: number): number {
  const value = environmentOf(definition)[name];
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== "string" || !Number.isFinite(Number(value))) {
    throw new Error(`${definition.Name}: ${name} is not a number in the task definition`);
  }
  return Number(value);
}

/**
 * Each daemon's whole stop after SIGTERM, from the environment its task definition sets: the drain
 * plus the shutdown overhead, and for the consumer a long poll opened just before SIGTERM (the
 * stack's own conservative rule, see docs/deployment.md).
 */
const stops = {
  relay: (definition: ContainerDefinition) =>
    environmentNumber(definition, "RELAY_DRAIN_TIMEOUT_MS") +
    environmentNumber(definition, "SHUTDOWN_OVERHEAD_MS"),
  consumer: (definition: ContainerDefinition) =>
    environmentNumber(definition, "CONSUMER_WAIT_TIME_SECONDS") * 1000 +
    environmentNumber(definition, "CONSUMER_DRAIN_TIMEOUT_MS") +
    environmentNumber(definition, "SHUTDOWN_OVERHEAD_MS"),
};

describe("the termination race against the deployed daemons", () => {
  for (const daemon of ["relay", "consumer"] as const) {
    it(`lets the ${daemon} finish its whole drain before SIGKILL`, () => {
      const definition = container(template, daemon);
      const counts = simulateDrainWindow({
        sigtermToKillMs: stopTimeoutMsOf(definition),
        drainMs: stops[daemon](definition),
      });
      expect(counts.drainsCut).toBe(0);
      expect(counts.dropped).toBe(0);
    });
  }

  it("predicts the cut drain of inverted settings: the consumer's stop under the relay's stopTimeout", () => {
    const relay = container(template, "relay");
    const consumer = container(template, "consumer");
    expect(stops.consumer(consumer)).toBeGreaterThan(stopTimeoutMsOf(relay));
    const counts = simulateDrainWindow({
      sigtermToKillMs: stopTimeoutMsOf(relay),
      drainMs: stops.consumer(consumer),
    });
    expect(counts.drainsCut).toBe(1);
    expect(counts.cutBySigkill).toBeGreaterThan(0);
  });
});

/**
 * How long an ALB takes to stop routing to a target that started draining. AWS publishes no bound;
 * seconds are typical, and 5 s is what the api's deregistration delay keeps beyond its longest
 * request (its margin), so that is the propagation this check holds the stack to.
 */
const ALB_PROPAGATION_MS = 5_000;

describe("the termination race against the deployed api behind its ALB", () => {
  const { template: withApi } = synth({ api: { equipmentUrl: "https://equipment.internal/" } });
  const api = container(withApi, "api");

  function deregistrationDelaySeconds(): number {
    const groups = Object.values(withApi.findResources("AWS::ElasticLoadBalancingV2::TargetGroup"));
    const attributes = (groups[0]?.Properties?.TargetGroupAttributes ?? []) as {
      Key: string;
      Value: string;
    }[];
    const delay = attributes.find((attribute) => attribute.Key === "deregistration_delay.timeout_seconds");
    if (groups.length !== 1 || !delay)
      throw new Error("expected one target group with a deregistration delay");
    return Number(delay.Value);
  }

  const app = {
    propagationMs: ALB_PROPAGATION_MS,
    longestRequestMs: environmentNumber(api, "API_HANDLER_TIMEOUT_MS", apiBudget().handlerTimeoutMs),
    drainMs: environmentNumber(api, "API_DRAIN_TIMEOUT_MS") + environmentNumber(api, "SHUTDOWN_OVERHEAD_MS"),
  };

  it("drops no request and cuts no drain with the synthesized deregistration delay and stopTimeout", () => {
    const outcome = simulateStop(
      {
        platform: "ecs",
        deregistrationDelaySeconds: deregistrationDelaySeconds(),
        stopTimeoutSeconds: stopTimeoutMsOf(api) / 1000,
      },
      app,
    );
    expect(outcome.requests.served).toBeGreaterThan(0);
    expect(outcome.requests.dropped).toBe(0);
    expect(outcome.drainsCut).toBe(0);
  });

  it("predicts the drops of settings that each miss their second term", () => {
    // A delay covering only the propagation, a stopTimeout covering only the drain timeout.
    const outcome = simulateStop(
      {
        platform: "ecs",
        deregistrationDelaySeconds: ALB_PROPAGATION_MS / 1000,
        stopTimeoutSeconds: environmentNumber(api, "API_DRAIN_TIMEOUT_MS") / 1000,
      },
      app,
    );
    expect(outcome.requests.refused).toBe(0);
    expect(outcome.requests.cutByLoadBalancer).toBeGreaterThan(0);
    expect(outcome.drainsCut).toBe(1);
  });
});
