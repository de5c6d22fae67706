import { type BudgetRule, type ConfigProblem, mustNotExceed, type Timeout } from "@outbox/shared";
import type { RelayConfig } from "./settings.js";
import { topicRoutingProblems } from "./topic-routing.js";

/**
 * The relay's timeout rules, on top of the common ones (drain + overhead < stop, statement < drain).
 * Together they make sure a stop never causes a second publish of the same row:
 * - one PublishBatch, all SDK attempts included, ends within the drain, so a batch in flight can finish;
 * - the lease outlives the drain plus the last statement, so no other relay can claim a row while we
 *   may still be publishing, marking or releasing it.
 * Its other checks come first, reported by runDaemon with every other problem (exit 78).
 */
export function relayTimeouts(config: RelayConfig): {
  drain: Timeout;
  rules: BudgetRule[];
  problems: ConfigProblem[];
} {
  const drain: Timeout = { env: "RELAY_DRAIN_TIMEOUT_MS", ms: config.drainTimeoutMs };
  return {
    drain,
    problems: [
      ...mustNotExceed(
        { env: "RELAY_BACKOFF_BASE_MS", value: config.backoffBaseMs },
        { env: "RELAY_BACKOFF_MAX_MS", value: config.backoffMaxMs },
      ),
      ...mustNotExceed(
        { env: "RELAY_BACKOFF_BASE_MS", value: config.backoffBaseMs },
        { env: "RELAY_OUTAGE_BACKOFF_MAX_MS", value: config.outageBackoffMaxMs },
      ),
      ...topicRoutingProblems(config),
    ],
    rules: [
      {
        inner: [publishTimeout(config)],
        outer: drain,
        why: "a PublishBatch in flight, with its retries, must be able to finish within the drain",
      },
      {
        inner: [drain, { env: "DB_STATEMENT_TIMEOUT_MS", ms: config.dbStatementTimeoutMs }],
        outer: { env: "RELAY_LEASE_MS", ms: config.leaseMs },
        why: "a row must stay leased while the drain may still publish or mark it, or another relay publishes it twice",
      },
    ],
  };
}

/** The longest one PublishBatch may take: every SDK attempt timing out. */
export function publishTimeout(config: RelayConfig): Timeout {
  return {
    env: "AWS_REQUEST_TIMEOUT_MS×AWS_MAX_ATTEMPTS",
    ms: config.awsRequestTimeoutMs * config.awsMaxAttempts,
  };
}
