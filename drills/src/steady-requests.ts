import { performance } from "node:perf_hooks";
import { sleep } from "@outbox/shared";

export interface RequestTally {
  readonly sent: number;
  /** Requests answered with a 2xx. */
  readonly answered: number;
  /** Requests with any other answer, or none (a refused connection, a timeout). */
  readonly failed: number;
}

export interface SteadyRequests {
  /** Stops sending and resolves once every request sent has ended. */
  stop(): Promise<RequestTally>;
}

/**
 * GETs `url` at a steady rate until stopped, each request on its own schedule slot (start + n ×
 * interval), not after the previous answer: a slow or failing replica must not slow the traffic
 * that reaches the others, as it would not behind a real load balancer.
 */
export function sendSteadily(url: string, requestsPerSecond: number, timeoutMs = 10_000): SteadyRequests {
  const interval = 1_000 / requestsPerSecond;
  const controller = new AbortController();
  const pending: Promise<boolean>[] = [];
  const send = async (): Promise<boolean> => {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
      await response.arrayBuffer();
      return response.ok;
    } catch {
      return false;
    }
  };
  const loop = (async () => {
    const start = performance.now();
    for (let n = 0; !controller.signal.aborted; n++) {
      const wait = start + n * interval - performance.now();
      if (wait > 0) await sleep(wait, controller.signal);
      if (!controller.signal.aborted) pending.push(send());
    }
  })();
  return {
    async stop() {
      controller.abort();
      await loop;
      const outcomes = await Promise.all(pending);
      const answered = outcomes.filter(Boolean).length;
      return { sent: outcomes.length, answered, failed: outcomes.length - answered };
    },
  };
}
