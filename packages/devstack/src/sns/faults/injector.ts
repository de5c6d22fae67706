import type { Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { SnsError } from "../errors.js";
import type { MessageAttribute } from "../message.js";
import type { FaultConfig, FaultRules, FaultScope, OkBody } from "./config.js";

/** What a fault can be scoped to: the SNS action and the topic it addresses, if any. */
export interface FaultTarget {
  action: string;
  topicArn: string | undefined;
}

/** The key of a rule, and of the requests it hung: a topic ARN, or {@link GLOBAL} for the global rule. */
type ScopeKey = string;
// Topic ARNs start with "arn:", so this cannot collide with one.
const GLOBAL: ScopeKey = "*";

export type RequestFault =
  | { kind: "none" }
  | { kind: "fail"; error: SnsError }
  | { kind: "okBody"; body: OkBody }
  | { kind: "hang"; scope: ScopeKey };

/**
 * Holds the fault rules, keyed by scope (one per topic ARN, plus one global rule; see
 * {@link FaultRules}), and decides, call by call, what goes wrong. Setting or clearing one scope
 * leaves the others, and the requests they hang, alone.
 */
export class FaultInjector {
  #global: FaultConfig | undefined;
  readonly #topics = new Map<string, FaultConfig>();
  readonly #hung = new Map<ScopeKey, Set<Socket>>();

  get rules(): FaultRules {
    return {
      ...(this.#global && { global: this.#global }),
      topics: Object.fromEntries(this.#topics),
    };
  }

  /** Replaces the rule of each topic in `config.topics`, or the global rule when there are none. */
  set(config: FaultConfig): void {
    const { topics, ...rule } = config;
    if (topics === undefined) this.#global = rule;
    else for (const topic of topics) this.#topics.set(topic, rule);
    if (!rule.hang) for (const scope of topics ?? [GLOBAL]) this.#dropHung(scope);
  }

  /** Removes the rules in `scope` and drops the requests they hung; no scope: every rule. */
  clear(scope?: FaultScope): void {
    if (!scope) {
      this.#global = undefined;
      this.#topics.clear();
      this.dropHung();
      return;
    }
    for (const topic of scope.topics ?? []) {
      this.#topics.delete(topic);
      this.#dropHung(topic);
    }
    if (scope.global) {
      this.#global = undefined;
      this.#dropHung(GLOBAL);
    }
  }

  /** The rule that applies to `request`: its topic's, else the global one; none if its `actions` exclude it. */
  #match({ action, topicArn }: FaultTarget): { scope: ScopeKey; rule: FaultConfig } | undefined {
    const topicRule = topicArn === undefined ? undefined : this.#topics.get(topicArn);
    const found =
      topicArn !== undefined && topicRule
        ? { scope: topicArn, rule: topicRule }
        : this.#global && { scope: GLOBAL, rule: this.#global };
    return found && (!found.rule.actions || found.rule.actions.includes(action)) ? found : undefined;
  }

  async delay(request: FaultTarget): Promise<void> {
    const latencyMs = this.#match(request)?.rule.latencyMs;
    if (latencyMs) await sleep(latencyMs);
  }

  requestFault(request: FaultTarget): RequestFault {
    const match = this.#match(request);
    if (!match) return { kind: "none" };
    const { hang, okBody, failureRate, failureMode } = match.rule;
    if (hang) return { kind: "hang", scope: match.scope };
    if (okBody) return { kind: "okBody", body: okBody };
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
   * execution would publish behind its back. `scope` is the hanging rule's (from
   * {@link requestFault}): only lifting that rule drops the connection.
   */
  hold(socket: Socket, scope: ScopeKey): void {
    const held = this.#hung.get(scope) ?? new Set<Socket>();
    this.#hung.set(scope, held);
    held.add(socket);
    socket.once("close", () => held.delete(socket));
  }

  #dropHung(scope: ScopeKey): void {
    for (const socket of this.#hung.get(scope) ?? []) socket.destroy();
    this.#hung.delete(scope);
  }

  /** Drops every hung request, whatever its scope (on stop). */
  dropHung(): void {
    for (const scope of [...this.#hung.keys()]) this.#dropHung(scope);
  }

  failsBatchEntry(request: FaultTarget, attributes: readonly MessageAttribute[]): boolean {
    const match = this.#match(request);
    if (!match) return false;
    const { batchEntryFailureRate, failBatchEntries } = match.rule;
    if (failBatchEntries) {
      const attribute = attributes.find((a) => a.name === failBatchEntries.attribute);
      if (attribute?.stringValue !== undefined && failBatchEntries.values.includes(attribute.stringValue)) {
        return true;
      }
    }
    return batchEntryFailureRate !== undefined && Math.random() < batchEntryFailureRate;
  }
}
