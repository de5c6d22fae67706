import type { FaultConfig } from "./config.js";

/** Typed client for the SNS emulator's fault control endpoint (`StackInfo.faultControlUrl`). */
export class FaultClient {
  constructor(readonly controlUrl: string) {}

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

  /** Back to normal behaviour; also drops any request held by `hang`. */
  async clear(): Promise<void> {
    await this.#call("DELETE");
  }
}
