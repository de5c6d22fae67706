import { StatsClient } from "../stats/client.js";
import { STATS_PATH } from "../stats/control.js";
import type { EmulatorStats } from "../stats/stats.js";
import type { FaultConfig } from "./config.js";

/**
 * Typed client for the SNS emulator's control surface: faults (`StackInfo.faultControlUrl`)
 * and, through {@link FaultClient.statsClient}, the publish statistics next to it.
 */
export class FaultClient {
  /** The emulator's publish statistics (`/_stats` beside `/_faults`). */
  readonly statsClient: StatsClient;

  constructor(readonly controlUrl: string) {
    this.statsClient = new StatsClient(new URL(STATS_PATH, controlUrl).toString());
  }

  async #call(method: "GET" | "POST" | "DELETE", config?: FaultConfig): Promise<FaultConfig> {
    const response = await fetch(this.controlUrl, {
      method,
      headers: config ? { "content-type": "application/json" } : undefined,
      body: config ? JSON.stringify(config) : undefined,
    });
    const body = (await response.json()) as FaultConfig & { error?: string };
    if (!response.ok) throw new Error(`fault control ${method} failed: ${body.error ?? response.status}`);
    return body;
  }

  /** Replaces the whole fault configuration (settings not given are switched off). */
  set(config: FaultConfig): Promise<FaultConfig> {
    return this.#call("POST", config);
  }

  get(): Promise<FaultConfig> {
    return this.#call("GET");
  }

  /** Publish/delivery counts per topic since the emulator's start or the last {@link resetStats}. */
  stats(): Promise<EmulatorStats> {
    return this.statsClient.get();
  }

  resetStats(): Promise<void> {
    return this.statsClient.reset();
  }

  /** Back to normal behaviour; also drops any request held by `hang`. */
  async clear(): Promise<void> {
    await this.#call("DELETE");
  }
}
