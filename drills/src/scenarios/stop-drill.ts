import { performance } from "node:perf_hooks";
import { DaemonFleet } from "@outbox/test-kit/process";
import { checkConsumerSigterm, checkRelaySigterm, checkRestartDrain } from "../checks.js";
import { consumerEnv, DRILL_TOPIC, drainedLine, relayEnv } from "../daemons.js";
import type { DrillContext } from "../drill-context.js";
import { prepareDrillEnvironment } from "../drill-environment.js";
import { observeDelivery, queueDepths, waitForFullDelivery } from "../observe.js";
import { enqueueBacklog } from "../produce-events.js";
import type { ScenarioResult } from "../report.js";
import { consumerIsHandling, relayIsPublishing } from "./moments.js";

/**
 * The source document's three rows, as one sequence on one backlog:
 * 1. relay-sigterm: SIGTERM while the relay publishes its first batch → the batch completes,
 *    `published=100 unsent=50`, exit 0.
 * 2. consumer-sigterm: SIGTERM while messages are in the handler → they finish and are deleted.
 * 3. restart-drain: restart both, drain → inbox 150/150 and zero duplicate skips.
 */
export async function runStopDrill(context: DrillContext): Promise<ScenarioResult[]> {
  const { scale, faults, progress } = context;
  const environment = await prepareDrillEnvironment(context, { label: "stop_drill" });
  const topicArn = environment.resources.topicArn;
  const fleet = new DaemonFleet();
  try {
    await enqueueBacklog(environment.database, DRILL_TOPIC, scale.events);
    progress(`enqueued ${scale.events} events`);

    // 1. A slow bus (150 ms per PublishBatch, two requests in flight) stretches the first batch
    //    over about a second, so the SIGTERM reliably lands inside it.
    const relayStarted = performance.now();
    await faults.set({ topics: [topicArn], actions: ["PublishBatch"], latencyMs: 150 });
    const relay1 = fleet.relay(
      "relay#1",
      relayEnv(environment, { RELAY_BATCH_SIZE: String(scale.batchSize), RELAY_PUBLISH_CONCURRENCY: "2" }),
    );
    await relayIsPublishing(environment, relay1);
    progress("relay#1 is publishing its first batch: SIGTERM");
    const relayStop = await relay1.stop("SIGTERM");
    await faults.clear();
    const relayDrained = drainedLine(relay1);
    const relayCheck = checkRelaySigterm({
      total: scale.events,
      batchSize: scale.batchSize,
      exit: relayStop,
      drained: relayDrained
        ? {
            published: Number(relayDrained.published),
            unsent: Number(relayDrained.unsent),
            clean: relayDrained.clean === true,
          }
        : null,
    });
    progress(`relay#1 exited: ${relayCheck.result}`);
    const relayResult: ScenarioResult = {
      scenario: "relay-sigterm",
      checks: [relayCheck],
      figures: { ...relayDrained, stopMs: relayStop.stopMs, exitCode: relayStop.code },
      durationMs: Math.round(performance.now() - relayStarted),
    };

    // 2. Handlers that take 300 ms each: SIGTERM lands while several are inside the handler.
    const consumerStarted = performance.now();
    const consumer1 = fleet.consumer(
      "consumer#1",
      consumerEnv(environment, { DRILL_HANDLER_MS: "300", CONSUMER_CONCURRENCY: "10" }),
    );
    const inHandlers = await consumerIsHandling(consumer1);
    progress(`consumer#1 has ${inHandlers} messages in the handler: SIGTERM`);
    const consumerStop = await consumer1.stop("SIGTERM");
    const afterStop = await queueDepths(environment);
    const consumerDrained = drainedLine(consumer1);
    const consumerCheck = checkConsumerSigterm({
      exit: consumerStop,
      inHandlersAtStop: inHandlers,
      undeletedAfterExit: afterStop.inFlight,
      drained: consumerDrained
        ? {
            processed: Number(consumerDrained.processed),
            released: Number(consumerDrained.released),
            clean: consumerDrained.clean === true,
          }
        : null,
    });
    progress(`consumer#1 exited: ${consumerCheck.result}`);
    const consumerResult: ScenarioResult = {
      scenario: "consumer-sigterm",
      checks: [consumerCheck],
      figures: { ...consumerDrained, inHandlersAtStop: inHandlers, stopMs: consumerStop.stopMs },
      durationMs: Math.round(performance.now() - consumerStarted),
    };

    // 3. Restart both and let them drain everything.
    const drainStarted = performance.now();
    const relay2 = fleet.relay(
      "relay#2",
      relayEnv(environment, { RELAY_BATCH_SIZE: String(scale.batchSize) }),
    );
    const consumer2 = fleet.consumer("consumer#2", consumerEnv(environment, { DRILL_HANDLER_MS: "5" }));
    await waitForFullDelivery(environment, [relay2, consumer2]);
    const stops = await Promise.all([relay2.stop("SIGTERM"), consumer2.stop("SIGTERM")]);
    const { counts, depths, delivery } = await observeDelivery(environment, [consumer1, consumer2]);
    const drainCheck = checkRestartDrain(delivery);
    progress(`restart-drain: ${drainCheck.result}`);
    const drainResult: ScenarioResult = {
      scenario: "restart-drain",
      checks: [drainCheck],
      figures: {
        ...counts,
        duplicates: delivery.duplicates,
        queue: depths.queue,
        dlq: depths.dlq,
        exitCodes: stops.map((stop) => stop.code),
        relay2: drainedLine(relay2),
        consumer2: drainedLine(consumer2),
      },
      durationMs: Math.round(performance.now() - drainStarted),
    };
    return [relayResult, consumerResult, drainResult];
  } finally {
    await fleet.killAll();
    await faults.clear().catch(() => {});
    await environment.close();
  }
}
