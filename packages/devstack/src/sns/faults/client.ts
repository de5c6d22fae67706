import { StatsClient } from "../../stats/client.js";
import { STATS_PATH } from "../../stats/control.js";
import type { FaultConfig, FaultRules, FaultScope } from "./config.js";

/**
 * Typed client for the SNS emulator's control surface: faults (`StackInfo.faultControlUrl`)
 * and, through {@link FaultClient.statsClient}, the publish statistics next to it.
 *
 * The emulator holds one fault rule per topic plus a global one ({@link FaultRules}), and test
 * files share it in parallel: each client remembers the scopes it has set, and {@link clear}
 * lifts only those, so `set({ topics: [mine], … })` … `clear()` never touches another file's faults.
 */
export class FaultClient {
  /** The emulator's publish statistics (`/_stats` beside `/_faults`). */
  readonly statsClient: StatsClient;
  /** Scopes set through this client since they were last cleared: what `clear()` lifts. */
  readonly #topics = new Set<string>();
  #global = false;

  constructor(readonly controlUrl: string) {
    this.statsClient = new StatsClient(new URL(STATS_PATH, controlUrl).toString());
  }

  async #call(method: "GET" | "POST" | "DELETE", body?: FaultConfig | FaultScope): Promise<FaultRules> {
    const response = await fetch(this.controlUrl, {
      method,
      headers: body ? { "content-type": "application/json" } : undefined,
      body: body ? JSON.stringify(body) : undefined,
    });
    const reply = (await response.json()) as FaultRules & { error?: string };
    if (!response.ok) throw new Error(`fault control ${method} failed: ${reply.error ?? response.status}`);
    return reply;
  }

  /**
   * Sets one rule (settings not given are switched off). With `topics` it replaces the rules of
   * exactly those topics, without it the global rule; every other rule stays. Answers all rules.
   */
  async set(config: FaultConfig): Promise<FaultRules> {
    const rules = await this.#call("POST", config);
    if (config.topics) for (const topic of config.topics) this.#topics.add(topic);
    else this.#global = true;
    return rules;
  }

  /** Every rule the emulator holds, whoever set it. */
  get(): Promise<FaultRules> {
    return this.#call("GET");
  }

  /**
   * Back to normal behaviour, and drops the requests held by `hang`, in a scope only:
   * - no argument: the scopes this client has set (nothing if it set none);
   * - `{ topics, global }`: those topics' rules, and the global rule if `global`;
   * - `{ all: true }`: every rule, whoever set it (one test file can undo another's).
   */
  async clear(scope?: FaultScope & { all?: boolean }): Promise<void> {
    if (scope?.all) {
      await this.#call("DELETE");
      this.#topics.clear();
      this.#global = false;
      return;
    }
    const topics = scope ? (scope.topics ?? []) : [...this.#topics];
    const global = scope ? scope.global === true : this.#global;
    if (topics.length === 0 && !global) return;
    await this.#call("DELETE", { topics, global });
    for (const topic of topics) this.#topics.delete(topic);
    if (global) this.#global = false;
  }
}
