import type { Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { SnsError } from "../sns/errors.js";
import type { MessageAttribute } from "../sns/message.js";
import type { FaultConfig } from "./config.js";

/** What a fault can be scoped to: the SNS action and the topic it addresses, if any. */
export interface FaultTarget {
  action: string;
  topicArn: string | undefined;
}

export type RequestFault = { kind: "none" } | { kind: "fail"; error: SnsError } | { kind: "hang" };

/** Holds the current fault configuration and decides, call by call, what goes wrong. */
export class FaultInjector {
  #config: FaultConfig = {};
  readonly #hung = new Set<Socket>();

  get config(): FaultConfig {
    return this.#config;
  }

  set(config: FaultConfig): void {
    this.#config = config;
    if (!config.hang) this.dropHung();
  }

  clear(): void {
    this.set({});
  }

  #applies(request: FaultTarget): boolean {
    const { actions, topics } = this.#config;
    if (actions && !actions.includes(request.action)) return false;
    return !topics || (request.topicArn !== undefined && topics.includes(request.topicArn));
  }

  async delay(request: FaultTarget): Promise<void> {
    const { latencyMs } = this.#config;
    if (latencyMs && this.#applies(request)) await sleep(latencyMs);
  }

  requestFault(request: FaultTarget): RequestFault {
    if (!this.#applies(request)) return { kind: "none" };
    const { hang, failureRate, failureMode } = this.#config;
    if (hang) return { kind: "hang" };
    if (failureRate && Math.random() < failureRate) {
      return {
        kind: "fail",
        error:
          failureMode === "internal-error"
            ? new SnsError("InternalError", "Injected fault: internal error", 500)
            : new SnsError("Throttling", "Injected fault: rate exceeded", 400),
      };
    }
    return { kind: "none" };
  }

  /**
   * Parks the connection without answering. Hung requests are destroyed rather than resumed
   * when the hang is lifted: the caller has usually timed out and retried already, and a late
   * execution would publish behind its back.
   */
  hold(socket: Socket): void {
    this.#hung.add(socket);
    socket.once("close", () => this.#hung.delete(socket));
  }

  dropHung(): void {
    for (const socket of this.#hung) socket.destroy();
    this.#hung.clear();
  }

  failsBatchEntry(request: FaultTarget, attributes: readonly MessageAttribute[]): boolean {
    if (!this.#applies(request)) return false;
    const { batchEntryFailureRate, failBatchEntries } = this.#config;
    if (failBatchEntries) {
      const attribute = attributes.find((a) => a.name === failBatchEntries.attribute);
      if (attribute?.stringValue !== undefined && failBatchEntries.values.includes(attribute.stringValue)) {
        return true;
      }
    }
    return batchEntryFailureRate !== undefined && Math.random() < batchEntryFailureRate;
  }
}
