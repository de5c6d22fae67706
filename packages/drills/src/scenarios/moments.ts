import { readMetric } from "../daemon-metrics.js";
import type { DaemonProcess } from "../daemon-process.js";
import type { DrillEnvironment } from "../drill-environment.js";
import { countTables } from "../observe.js";
import { waitUntil } from "../wait-until.js";

/*
 * The moments a drill stops a daemon at, observed from outside the way an operator could — the
 * tables and /metrics — so the daemons need no test-only switches.
 */

/** Resolves once the relay has marked its first chunk: it is inside its first batch. */
export async function relayIsPublishing(environment: DrillEnvironment, relay: DaemonProcess): Promise<void> {
  await waitUntil(
    "the relay to publish its first chunk",
    async () => (await countTables(environment)).published > 0,
    {
      alive: [relay],
    },
  );
}

/** Resolves with the number of messages inside the consumer's handlers, once there are some. */
export async function consumerIsHandling(consumer: DaemonProcess): Promise<number> {
  const opsPort = Number((await consumer.waitForLog("started")).opsPort);
  let inHandlers = 0;
  await waitUntil(
    "messages inside the consumer's handler",
    async () => {
      inHandlers = await readMetric(opsPort, "consumer_in_flight_messages");
      return inHandlers > 0;
    },
    { alive: [consumer] },
  );
  return inHandlers;
}
