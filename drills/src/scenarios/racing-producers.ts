import { performance } from "node:perf_hooks";
import { createDatabase } from "@outbox/shared";
import {
  commitOrderInversions,
  DaemonFleet,
  type DaemonProcess,
  judgeKeyOrder,
  type RacingPlan,
  raceProducers,
  seededRandom,
  waitUntil,
} from "@outbox/test-kit/process";
import { checkKeyOrder } from "../checks.js";
import { consumerEnv, DRILL_TOPIC, relayEnv } from "../daemons.js";
import type { DrillContext } from "../drill-context.js";
import { prepareDrillEnvironment } from "../drill-environment.js";
import { keyedEvents, observeDelivery, waitForFullDelivery } from "../observe.js";
import { startOrderWitness } from "../order-witness.js";
import type { ScenarioResult } from "../report.js";
import { quickRelayLeases } from "./fast-recovery-env.js";

/**
 * Per-key order under racing producers (issue 41): 32 producers on 8 keys, some holding their
 * transaction open after the enqueue, some rolling back, against two relays of which one is
 * SIGKILLed mid-run and replaced. The order each key reached the bus in (a FIFO witness queue) is
 * judged against `seq` and `seq` against the order the transactions committed in; the consumer's
 * inbox shows every committed event processed exactly once.
 */
export async function runRacingProducers(context: DrillContext): Promise<ScenarioResult[]> {
  const { scale, progress, seed } = context;
  const started = performance.now();
  const plan: RacingPlan = {
    producers: 32,
    keys: 8,
    transactionsEach: scale.racingTransactions,
    heldShare: 0.1,
    heldMaxMs: 500,
    rollbackShare: 0.05,
  };
  const environment = await prepareDrillEnvironment(context, { label: "racing_producers", fifo: true });
  const witness = await startOrderWitness(environment);
  // A connection per producer: a producer waiting for a key holds its own.
  const producers = createDatabase({
    url: environment.databaseUrl,
    service: "drill-producers",
    poolMax: plan.producers,
    statementTimeoutMs: 30_000,
    idleInTransactionTimeoutMs: 30_000,
  });
  const fleet = new DaemonFleet();
  try {
    const relayOverrides = { ...quickRelayLeases, RELAY_BATCH_SIZE: "20", RELAY_PUBLISH_CONCURRENCY: "2" };
    const relays: DaemonProcess[] = [
      fleet.relay("relay#1", relayEnv(environment, relayOverrides)),
      fleet.relay("relay#2", relayEnv(environment, relayOverrides)),
    ];
    await Promise.all(relays.map((relay) => relay.waitForLog("started")));
    const consumer = fleet.consumer("consumer", consumerEnv(environment, { DRILL_HANDLER_MS: "5" }));
    const random = seededRandom(seed);
    const race = raceProducers(producers, DRILL_TOPIC, plan, random);
    // The kill lands once the relays are publishing what the producers commit.
    await waitUntil("the relays to publish the producers' first events", async () => {
      const events = await keyedEvents(environment);
      return events.length >= plan.producers;
    });
    const victim = relays[Math.floor(random() * relays.length)] as DaemonProcess;
    await victim.stop("SIGKILL");
    progress(`racing producers: ${victim.name} SIGKILLed mid-run; relay#3 replaces it`);
    relays.push(fleet.relay("relay#3", relayEnv(environment, relayOverrides)));
    const outcome = await race;
    const alive = relays.filter((relay) => relay !== victim);
    await waitForFullDelivery(environment, [...alive, consumer]);
    await Promise.all([...alive.map((relay) => relay.stop("SIGTERM")), consumer.stop("SIGTERM")]);

    const events = await keyedEvents(environment);
    const order = judgeKeyOrder(events, await witness.read());
    const seqOf = new Map(events.map((event) => [event.id, event.seq]));
    const { counts, delivery } = await observeDelivery(environment, [consumer]);
    const expected = outcome.committed.reduce((sum, transaction) => sum + transaction.ids.length, 0);
    const check = checkKeyOrder({
      producers: plan.producers,
      keys: plan.keys,
      held: outcome.held,
      kills: 1,
      expected,
      rolledBack: outcome.rolledBack.length,
      outOfOrder: order.outOfOrder,
      overtaken: order.overtaken,
      commitOrderInversions: commitOrderInversions(outcome.committed, seqOf),
      inbox: delivery.inbox,
      effects: delivery.effects,
      lost: counts.lost,
      dead: counts.dead,
      duplicates: delivery.duplicates,
    });
    progress(`racing producers: ${check.result}`);
    return [
      {
        scenario: "racing-producers",
        checks: [check],
        figures: {
          ...plan,
          committedTransactions: outcome.committed.length,
          committedEvents: expected,
          outboxRows: counts.enqueued,
          failedTransactions: outcome.failed,
          held: outcome.held,
          rolledBack: outcome.rolledBack.length,
          ...order,
          duplicates: delivery.duplicates,
          inbox: delivery.inbox,
          effects: delivery.effects,
          lost: counts.lost,
        },
        durationMs: Math.round(performance.now() - started),
        seed,
      },
    ];
  } finally {
    await fleet.killAll();
    await producers.close(5_000);
    await environment.close();
  }
}
