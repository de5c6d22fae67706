import { API_METRICS } from "@outbox/api";
import { CONSUMER_METRICS } from "@outbox/consumer";
import { RELAY_METRICS } from "@outbox/relay";
import type { DaemonProcess } from "@outbox/test-kit/process";
import { waitUntil } from "@outbox/test-kit/process";
import { readMetric } from "../daemon-metrics.js";
import type { DrillEnvironment } from "../drill-environment.js";
import { countTables } from "../observe.js";

/*
 * The moments a drill stops a daemon at, observed from outside the way an operator could — the
 * tables and /metrics — so the daemons need no test-only switches.
 */

/**
 * Resolves once the relay has marked its first chunk (it is inside its first batch) and has a
 * PublishBatch out at the bus at that moment. Both matter: between two chunks, or after the last
 * one, nothing is in flight, and a stop there proves nothing — under CPU load a drill that looked
 * only at the table sometimes struck in such a gap and saw no re-send after a SIGKILL.
 */
export async function relayIsPublishing(environment: DrillEnvironment, relay: DaemonProcess): Promise<void> {
  const opsPort = Number((await relay.waitForLog("started")).opsPort);
  await waitUntil(
    "the relay to publish its first chunk with another one in flight",
    // The table first (once true, it stays true), the in-flight gauge last: the stop follows the
    // reading that matters by as little as possible.
    async () =>
      (await countTables(environment)).published > 0 &&
      (await readMetric(opsPort, RELAY_METRICS.requestsInFlight)) > 0,
    { alive: [relay], intervalMs: 5 },
  );
}

/** Resolves with the number of messages inside the consumer's handlers, once there are some. */
export async function consumerIsHandling(consumer: DaemonProcess): Promise<number> {
  const opsPort = Number((await consumer.waitForLog("started")).opsPort);
  let inHandlers = 0;
  await waitUntil(
    "messages inside the consumer's handler",
    async () => {
      inHandlers = await readMetric(opsPort, CONSUMER_METRICS.inFlight);
      return inHandlers > 0;
    },
    { alive: [consumer] },
  );
  return inHandlers;
}

/** Resolves once the photo service holds `count` requests (e.g. each waiting before its commit). */
export async function apiHoldsRequests(api: DaemonProcess, count: number): Promise<void> {
  const opsPort = Number((await api.waitForLog("started")).opsPort);
  await waitUntil(
    `${count} requests in flight at the photo service`,
    async () => (await readMetric(opsPort, API_METRICS.inFlight)) >= count,
    { alive: [api] },
  );
}
