import { startTcpFaultProxy, type TcpCut, type TcpFaultProxy } from "@outbox/devstack";
import exampleHandlers, { type ExampleDatabase, exampleEffectRow } from "@outbox/example-handlers";
import { createDatabase, type DatabaseHandle } from "@outbox/shared";
import { capturingLogger, drainQueue, metricValue, waitUntil } from "@outbox/test-kit";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { createConsumer, defineHandlers } from "../src/index.js";
import { effectCount, exampleEvent, queueFor, sendRaw, useConsumerTestBed } from "./harness.js";

// The database cut between the consumer and Postgres (a TCP proxy), the setting: visibility
// 2 s, maxReceiveCount 3. Messages that arrive meanwhile must not reach the DLQ.

const bed = useConsumerTestBed("consumer_outage");
let proxy: TcpFaultProxy | undefined;
let throughProxy: DatabaseHandle | undefined;

afterEach(async () => {
  await throughProxy?.close(5_000);
  await proxy?.close();
  throughProxy = undefined;
  proxy = undefined;
});

/** A pool on the bed's database that goes through a fault proxy: connect timeout 1 s. */
async function poolThroughProxy(): Promise<{ proxy: TcpFaultProxy; database: DatabaseHandle }> {
  const url = new URL(bed.databaseUrl);
  proxy = await startTcpFaultProxy({ host: url.hostname, port: Number(url.port) });
  url.host = `127.0.0.1:${proxy.port}`;
  throughProxy = createDatabase({
    url: url.toString(),
    service: "consumer-outage-test",
    poolMax: 12,
    statementTimeoutMs: 2_000,
    connectTimeoutMs: 1_000,
    idleInTransactionTimeoutMs: 10_000,
  });
  return { proxy, database: throughProxy };
}

const lineMessages = (lines: readonly string[]) => lines.map((line) => JSON.parse(line).msg as string);

describe.each<TcpCut>(["reset", "hang"])("the database cut (%s)", (kind) => {
  it("pauses intake, spends no attempts, resumes when it answers: no DLQ, every effect once", async () => {
    const queue = await queueFor(`outage-${kind}`, { maxReceiveCount: 3, visibilityTimeoutSeconds: 2 });
    const { proxy, database } = await poolThroughProxy();
    const { written: lines, log } = capturingLogger();
    const metrics = new Registry();
    const consumer = createConsumer({
      handlers: exampleHandlers,
      pool: database.pool,
      sqs: bed.sqs,
      queueUrl: queue.queueUrl,
      dlqUrl: queue.dlqUrl,
      visibilityTimeoutSeconds: 2,
      visibilityMarginMs: 500,
      handlerTimeoutMs: 1_000,
      statementTimeoutMs: 1_000,
      waitTimeSeconds: 1,
      concurrency: 10,
      log,
      metrics,
    });
    // The bed's database is the file's: the other cut's effects are there too.
    const before = await effectCount(bed.database);
    consumer.start();
    try {
      await sendRaw(bed.sqs, queue.queueUrl, [exampleEvent("before")]);
      await waitUntil("the first effect", async () => (await effectCount(bed.database)) === before + 1);

      await proxy.cut(kind);
      const events = Array.from({ length: 30 }, (_, index) => exampleEvent(`during-${index}`));
      await sendRaw(bed.sqs, queue.queueUrl, events);
      await waitUntil("the pause", () => consumer.pausedBy().includes("database unreachable"));
      expect(await metricValue(metrics, "consumer_database_unreachable")).toBe(1);
      // Longer than the visibility timeout times maxReceiveCount: a consumer that kept receiving
      // would have sent every message to the DLQ by now.
      const received = consumer.stats();
      await new Promise((resolve) => setTimeout(resolve, 8_000));
      expect(consumer.stats().processed).toBe(received.processed);
      await proxy.restore();

      await waitUntil("every effect", async () => (await effectCount(bed.database)) === before + 31);
      expect(consumer.pausedBy()).toEqual([]);
      const summary = await consumer.drain();
      expect(summary).toMatchObject({ processed: 31, failed: 0, poison: 0, databaseOutages: 1 });
      expect(summary.databaseOutageMs).toBeGreaterThanOrEqual(8_000);
      expect(await drainQueue(bed.sqs, queue.dlqUrl)).toHaveLength(0);
      const messages = lineMessages(lines);
      expect(messages.filter((msg) => msg.startsWith("database unreachable"))).toHaveLength(1);
      expect(messages.filter((msg) => msg.startsWith("database answering again"))).toHaveLength(1);
      expect(messages.filter((msg) => msg.startsWith("message failed"))).toEqual([]);
    } finally {
      await consumer.drain();
    }
  });
});

describe("a handler's own dependency", () => {
  /** The example effect, after a call to the handler's downstream, which refuses while it is "down". */
  function handlersWithDownstream(downstream: { down: boolean }) {
    return defineHandlers<{ "example.created": { name: string } }, ExampleDatabase>({
      "example.created": async (event, { trx }) => {
        // A refused connection, as a payment API that is down gives: port 1 has no listener.
        if (downstream.down) await fetch("http://127.0.0.1:1/");
        await trx.insertInto("example_effects").values(exampleEffectRow(event)).execute();
      },
    });
  }

  it("refusing is the handler's failure, not an outage: the database answers the probe", async () => {
    const queue = await queueFor("own-dependency", { maxReceiveCount: 5 });
    const consumer = bed.consumer(queue, {
      handlers: handlersWithDownstream({ down: true }),
      killSwitchTripPercent: 0,
      retryBaseSeconds: 30,
      waitTimeSeconds: 1,
    });
    consumer.start();
    try {
      await sendRaw(bed.sqs, queue.queueUrl, [exampleEvent("refused")]);
      await waitUntil("the failure", () => consumer.stats().failed === 1);
      expect(consumer.stats()).toMatchObject({ databaseOutages: 0, released: 0 });
      expect(consumer.pausedBy()).toEqual([]);
    } finally {
      await consumer.drain();
    }
  });

  it("failing too often trips the kill switch: no receive while it holds, one message tried after each pause, then every effect once", async () => {
    const queue = await queueFor("kill-switch", { maxReceiveCount: 5, visibilityTimeoutSeconds: 5 });
    const downstream = { down: true };
    const { written: lines, log } = capturingLogger();
    const metrics = new Registry();
    const consumer = bed.consumer(queue, {
      handlers: handlersWithDownstream(downstream),
      dlqUrl: queue.dlqUrl,
      retryBaseSeconds: 1,
      retryMaxSeconds: 2,
      killSwitchTripPercent: 50,
      killSwitchActivityThreshold: 5,
      killSwitchWindowMs: 10_000,
      killSwitchRestartMs: 6_000,
      killSwitchRestartMaxMs: 6_000,
      log,
      metrics,
    });
    const received = () => metricValue(metrics, "consumer_messages_received_total");
    const before = await effectCount(bed.database);
    const events = Array.from({ length: 20 }, (_, index) => exampleEvent(`downstream-${index}`));
    await sendRaw(bed.sqs, queue.queueUrl, events);
    consumer.start();
    try {
      await waitUntil("the trip", () => consumer.pausedBy().includes("kill switch"));
      const atTrip = await received();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      // Still held (the pause is 3–6 s): nothing was received meanwhile.
      expect(consumer.pausedBy()).toEqual(["kill switch"]);
      expect(await received()).toBe(atTrip);
      expect(await metricValue(metrics, "consumer_kill_switch_tripped")).toBe(1);
      // After the pause one message is tried; the downstream still down, it fails and trips the switch again.
      await waitUntil("the trial's trip", () => consumer.stats().killSwitchTrips === 2);
      expect(await received()).toBe(atTrip + 1);
      downstream.down = false;
      await waitUntil("every effect", async () => (await effectCount(bed.database)) === before + 20);
      const summary = await consumer.drain();
      expect(summary).toMatchObject({ processed: 20, killSwitchTrips: 2 });
      expect(await drainQueue(bed.sqs, queue.dlqUrl)).toHaveLength(0);
      const messages = lineMessages(lines);
      expect(messages.filter((msg) => msg.startsWith("handlers failing"))).toHaveLength(2);
      expect(messages.filter((msg) => msg.startsWith("kill switch: intake resumed"))).toHaveLength(1);
    } finally {
      await consumer.drain();
    }
  });
});
