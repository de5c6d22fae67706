import type { EmulatorStats, TopicStats } from "./stats.js";

const EMPTY_TOPIC: TopicStats = {
  published: 0,
  delivered: 0,
  deliveryFailures: 0,
  withEventId: 0,
  distinctEventIds: 0,
  republished: 0,
  eventIdsTruncated: false,
};

/** Typed client for the SNS emulator's publish statistics (`GET`/`DELETE /_stats`). */
export class StatsClient {
  constructor(readonly statsUrl: string) {}

  async #call(method: "GET" | "DELETE"): Promise<EmulatorStats> {
    const response = await fetch(this.statsUrl, { method });
    const body = (await response.json()) as EmulatorStats & { error?: string };
    if (!response.ok) throw new Error(`emulator stats ${method} failed: ${body.error ?? response.status}`);
    return body;
  }

  /** Counts for every topic published to since the start or the last reset. */
  get(): Promise<EmulatorStats> {
    return this.#call("GET");
  }

  /** Counts for one topic (all zero when nothing was published to it). */
  async topic(topicArn: string): Promise<TopicStats> {
    return (await this.get()).topics[topicArn] ?? { ...EMPTY_TOPIC };
  }

  /** Starts counting afresh, for every topic. */
  async reset(): Promise<void> {
    await this.#call("DELETE");
  }
}
