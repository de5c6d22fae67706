import type { ConfigProblem } from "./config-error.js";

/** A named timeout taken from configuration: `env` names the variable an operator would change. */
export interface Timeout {
  readonly env: string;
  readonly ms: number;
}

/**
 * "Inner layers wait less": the sum of `inner` must stay strictly below `outer`.
 * Example: drain timeout + shutdown overhead < STOP_TIMEOUT_MS, or the platform's SIGKILL lands
 * while the drain is still running and the stop manufactures redeliveries after all.
 */
export interface BudgetRule {
  readonly inner: readonly Timeout[];
  readonly outer: Timeout;
  readonly why: string;
}

/**
 * Problems of every rule that is broken, worded for the operator who must fix the task definition.
 * A problem is the first inner timeout's (the line names it), so its message starts with its value:
 * `RELAY_DRAIN_TIMEOUT_MS: 20000 ms + DB_STATEMENT_TIMEOUT_MS (5000 ms) = 25000 ms must be less than …`.
 */
export function findBudgetProblems(rules: readonly BudgetRule[]): ConfigProblem[] {
  return rules.flatMap((rule) => {
    const used = rule.inner.reduce((sum, timeout) => sum + timeout.ms, 0);
    if (used < rule.outer.ms) return [];
    const [first, ...others] = rule.inner;
    const terms = [
      `${first?.ms ?? 0} ms`,
      ...others.map((timeout) => `${timeout.env} (${timeout.ms} ms)`),
    ].join(" + ");
    const sum = others.length === 0 ? "" : ` = ${used} ms`;
    return [
      {
        env: first?.env ?? rule.outer.env,
        message: `${terms}${sum} must be less than ${rule.outer.env} (${rule.outer.ms} ms): ${rule.why}`,
      },
    ];
  });
}

/**
 * The resolved hierarchy as flat log fields in milliseconds, e.g. `{ STOP_TIMEOUT_MS: 30000 }`. A
 * variable set in another unit gets an `_IN_MS` suffix (`CONSUMER_WAIT_TIME_SECONDS_IN_MS: 10000`),
 * so no field shows a number in a unit its name contradicts.
 */
export function describeTimeouts(rules: readonly BudgetRule[]): Record<string, number> {
  const fields: Record<string, number> = {};
  for (const rule of rules) {
    for (const timeout of [rule.outer, ...rule.inner]) {
      fields[timeout.env.endsWith("_MS") ? timeout.env : `${timeout.env}_IN_MS`] = timeout.ms;
    }
  }
  return fields;
}
