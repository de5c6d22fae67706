import { enqueue, type NewEvent } from "@outbox/client";
import { type DatabaseHandle, sleep } from "@outbox/shared";

/**
 * The events a drill produces: the example handlers' `example.created` type, so the consumer's
 * effect table counts effects; eight ordering keys, so the relay's per-key order is exercised.
 */
export function drillEvent(topic: string, n: number): NewEvent {
  return {
    topic,
    eventType: "example.created",
    orderingKey: `key-${n % 8}`,
    payload: { name: `drill-${n}` },
  };
}

/** Enqueues `count` events in one transaction (the relay's backlog for the stop drills). */
export async function enqueueBacklog(
  database: DatabaseHandle,
  topic: string,
  count: number,
): Promise<string[]> {
  const events = Array.from({ length: count }, (_, n) => drillEvent(topic, n));
  return database.db.transaction().execute((trx) => enqueue(trx, events));
}

export interface SteadyProducer {
  /** Events committed so far. */
  produced(): number;
  /** Stops producing and resolves once the last transaction committed. */
  stop(): Promise<number>;
}

/**
 * Enqueues events at a steady rate, in small transactions every 20 ms, until stopped: the traffic
 * a rolling restart must not lose.
 */
export function produceSteadily(
  database: DatabaseHandle,
  topic: string,
  eventsPerSecond: number,
): SteadyProducer {
  const tickMs = 20;
  const controller = new AbortController();
  let produced = 0;
  let owed = 0;
  const loop = (async () => {
    let last = performance.now();
    while (!controller.signal.aborted) {
      await sleep(tickMs, controller.signal);
      const now = performance.now();
      owed += ((now - last) / 1000) * eventsPerSecond;
      last = now;
      const count = Math.floor(owed);
      if (count === 0) continue;
      owed -= count;
      const events = Array.from({ length: count }, (_, i) => drillEvent(topic, produced + i));
      // A database restart in the chaos drill makes some transactions fail: those events never
      // existed, so they are not counted and nothing is expected of them.
      try {
        await database.db.transaction().execute((trx) => enqueue(trx, events));
        produced += count;
      } catch {
        await sleep(200, controller.signal);
      }
    }
  })();
  return {
    produced: () => produced,
    async stop() {
      controller.abort();
      await loop;
      return produced;
    },
  };
}
