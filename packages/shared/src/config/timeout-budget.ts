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

function describe(timeouts: readonly Timeout[]): string {
  return timeouts.map((timeout) => `${timeout.env} (${timeout.ms} ms)`).join(" + ");
}

/** Problems of every rule that is broken, worded for the operator who must fix the task definition. */
export function findBudgetProblems(rules: readonly BudgetRule[]): ConfigProblem[] {
  return rules.flatMap((rule) => {
    const used = rule.inner.reduce((sum, timeout) => sum + timeout.ms, 0);
    if (used < rule.outer.ms) return [];
    const env = rule.inner[0]?.env ?? rule.outer.env;
    return [
      {
        env,
        message: `${describe(rule.inner)} = ${used} ms must be less than ${describe([rule.outer])}: ${rule.why}`,
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
