import { performance } from "node:perf_hooks";
import { CONSUMER_METRICS } from "@outbox/consumer";
import { statsClientFor } from "@outbox/devstack";
import { DaemonFleet } from "@outbox/test-kit/process";
import { checkSigkill } from "../checks.js";
import { readMetric } from "../daemon-metrics.js";
import { consumerEnv, DRILL_TOPIC, relayEnv } from "../daemons.js";
import type { DrillContext } from "../drill-context.js";
import { prepareDrillEnvironment } from "../drill-environment.js";
import { countTables, observeDelivery, waitForFullDelivery } from "../observe.js";
import { enqueueBacklog } from "../produce-events.js";
import type { ScenarioResult } from "../report.js";
import { quickConsumerVisibility, quickRelayLeases } from "./fast-recovery-env.js";
import { consumerIsHandling, relayIsPublishing } from "./moments.js";

/**
 * The comparison: the stop drill's moments, but SIGKILL instead of SIGTERM. The relay dies with
 * chunks in flight (re-sent after its lease runs out), the consumer dies with messages in the
 * handler (redelivered after their visibility timeout). The inbox must catch every repeat.
 */
export async function runSigkillDrill(context: DrillContext): Promise<ScenarioResult[]> {
  const { scale, faults, progress } = context;
  const started = performance.now();
  const environment = await prepareDrillEnvironment(context, { label: "sigkill" });
  const { topicArn } = environment.resources;
  const fleet = new DaemonFleet();
  try {
    await enqueueBacklog(environment.database, DRILL_TOPIC, scale.events);
    await faults.set({ topics: [topicArn], actions: ["PublishBatch"], latencyMs: 150 });
    const relayOverrides = { ...quickRelayLeases, RELAY_BATCH_SIZE: String(scale.batchSize) };
    const relay1 = fleet.relay(
      "relay#1",
      relayEnv(environment, { ...relayOverrides, RELAY_PUBLISH_CONCURRENCY: "2" }),
    );
    await relayIsPublishing(environment, relay1);
    await relay1.stop("SIGKILL");
    await faults.clear();
    const afterRelayKill = await countTables(environment);
    progress(`relay#1 SIGKILLed mid-batch after ${afterRelayKill.published} marked as published`);

    const consumerOverrides = { ...quickConsumerVisibility, CONSUMER_CONCURRENCY: "10" };
    const consumer1 = fleet.consumer(
      "consumer#1",
      consumerEnv(environment, { ...consumerOverrides, DRILL_HANDLER_MS: "300" }),
    );
    const inHandlers = await consumerIsHandling(consumer1);
    // A SIGKILLed consumer writes no `drained` line: the repeats it caught before the kill (two
    // copies of one event, when the relay's PublishBatch was retried before its kill) are read from
    // its /metrics just before it.
    const opsPort = Number((await consumer1.waitForLog("started")).opsPort);
    const caughtBeforeKill = await readMetric(opsPort, CONSUMER_METRICS.duplicates);
    await consumer1.stop("SIGKILL");
    progress(`consumer#1 SIGKILLed with ${inHandlers} messages in the handler`);

    const relay2 = fleet.relay("relay#2", relayEnv(environment, relayOverrides));
    const consumer2 = fleet.consumer(
      "consumer#2",
      consumerEnv(environment, { ...consumerOverrides, DRILL_HANDLER_MS: "5" }),
    );
    await waitForFullDelivery(environment, [relay2, consumer2]);
    const exits = await Promise.all([relay2.stop("SIGTERM"), consumer2.stop("SIGTERM")]);
    const { counts, depths, delivery } = await observeDelivery(environment, [consumer1, consumer2]);
    const stats = statsClientFor(context.stack);
    const relayResent = stats ? (await stats.topic(topicArn)).republished : Number.NaN;
    const duplicates = delivery.duplicates + caughtBeforeKill;
    const check = checkSigkill({ ...delivery, duplicates, relayResent, kills: 2 });
    progress(`sigkill: ${check.result}`);
    return [
      {
        scenario: "sigkill",
        checks: [check],
        figures: {
          ...counts,
          duplicates,
          relayResent,
          markedBeforeKill: afterRelayKill.published,
          inHandlersAtKill: inHandlers,
          queue: depths.queue,
          dlq: depths.dlq,
          exitCodes: exits.map((exit) => exit.code),
        },
        durationMs: Math.round(performance.now() - started),
      },
    ];
  } finally {
    await fleet.killAll();
    await faults.clear().catch(() => {});
    await environment.close();
  }
}
