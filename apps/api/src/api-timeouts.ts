import { type BudgetRule, type ConfigProblem, mustNotExceed, type Timeout } from "@outbox/shared";
import type { ApiConfig } from "./settings.js";

function ms(env: string, value: number): Timeout {
  return { env, ms: value };
}

/**
 * The reconciliation backoff's base ≤ its cap: checked by the service and by the one-shot
 * `api reconcile` alike (reconcile-once.ts), which read the same settings.
 */
export function reconcileBackoffProblems(
  config: Pick<ApiConfig, "reconcileBackoffBaseMs" | "reconcileBackoffMaxMs">,
): ConfigProblem[] {
  return mustNotExceed(
    { env: "API_RECONCILE_BACKOFF_BASE_MS", value: config.reconcileBackoffBaseMs },
    { env: "API_RECONCILE_BACKOFF_MAX_MS", value: config.reconcileBackoffMaxMs },
  );
}

/** Checks that are not a strict sum of timeouts; each message names every variable it reads. */
function otherProblems(config: ApiConfig): ConfigProblem[] {
  return [
    ...mustNotExceed(
      { env: "API_HANDLER_TIMEOUT_MS", value: config.handlerTimeoutMs },
      { env: "API_DRAIN_TIMEOUT_MS", value: config.drainTimeoutMs },
      "a request that arrived just before SIGTERM must be able to finish within the drain",
    ),
    ...reconcileBackoffProblems(config),
  ];
}

/**
 * The service's timeout hierarchy, checked by runDaemon before anything starts (with the common
 * rules: drain + shutdown overhead < STOP_TIMEOUT_MS, statement timeout < drain). Inner layers wait
 * less; the keep-alive is the one exception, it must outlast the load balancer's idle timeout.
 */
export function apiTimeouts(config: ApiConfig): {
  drain: Timeout;
  rules: BudgetRule[];
  problems: ConfigProblem[];
} {
  const drain = ms("API_DRAIN_TIMEOUT_MS", config.drainTimeoutMs);
  const handler = ms("API_HANDLER_TIMEOUT_MS", config.handlerTimeoutMs);
  const request = ms("API_REQUEST_TIMEOUT_MS", config.requestTimeoutMs);
  const rules: BudgetRule[] = [
    {
      inner: [ms("API_HEADERS_TIMEOUT_MS", config.headersTimeoutMs)],
      outer: request,
      why: "the headers are part of the request and must arrive well within its limit",
    },
    {
      inner: [handler],
      outer: request,
      why: "a handler must give up and answer before the server cuts the connection without an answer",
    },
    {
      inner: [ms("API_EQUIPMENT_TIMEOUT_MS", config.equipmentTimeoutMs)],
      outer: handler,
      why: "a downstream call must give up while the request can still answer",
    },
    {
      inner: [ms("DB_STATEMENT_TIMEOUT_MS", config.dbStatementTimeoutMs)],
      outer: handler,
      why: "a statement must give up before the request it belongs to",
    },
    {
      inner: [ms("API_LB_IDLE_TIMEOUT_MS", config.loadBalancerIdleTimeoutMs)],
      outer: ms("API_KEEP_ALIVE_TIMEOUT_MS", config.keepAliveTimeoutMs),
      why: "the load balancer must close an idle connection first, or it reuses one the server just closed (sporadic 502)",
    },
  ];
  // Reported by runDaemon with every other problem (unparsable variables, broken rules), exit 78.
  return { drain, rules, problems: otherProblems(config) };
}
