import type { ConfigProblem } from "./config-error.js";
import type { BudgetRule, Timeout } from "./timeout-budget.js";

/**
 * How a reader names a setting: a daemon's operator by its variable (RELAY_LEASE_MS), a library
 * caller by its option (leaseMs). A rule's message names every setting it reads this way.
 */
export type SettingNames<V> = (key: keyof V & string) => string;

/**
 * A rule across settings, stated once for a daemon and for its library (a backoff's base ≤ its
 * cap, the delivery and its topics…): the settings it reads, the first being the one to change,
 * and what is wrong when `values` break it, or undefined. (A rule of the timeout hierarchy, a sum
 * of timeouts, is a {@link TimeoutRule}: it is logged at start as well as checked.)
 */
export interface SettingRule<V> {
  readonly reads: readonly (keyof V & string)[];
  problem(values: V, name: SettingNames<V>): string | undefined;
}

// A value that may be absent is a number all the same: a rule reading an absent one is left out (brokenRules).
type NumericKey<V> = { [K in keyof V]-?: NonNullable<V[K]> extends number ? K : never }[keyof V] & string;

/** `value` ≤ `limit`: e.g. a backoff whose base exceeds its cap, which would silently win from the first retry on. */
export function notAbove<V>(value: NumericKey<V>, limit: NumericKey<V>, why?: string): SettingRule<V> {
  return {
    reads: [value, limit],
    problem(values, name) {
      const [checked, bound] = [values[value] as number, values[limit] as number];
      if (checked <= bound) return undefined;
      return `${checked} must not exceed ${name(limit)} (${bound})${why === undefined ? "" : `: ${why}`}`;
    },
  };
}

/**
 * The problem of each rule `values` break, under the name of the setting to change. A rule reading
 * a value that is not given is left out: a program may have only some of the settings (`api
 * reconcile`, `createPhotoServer`), and a rule applies where all it reads is given.
 */
export function brokenRules<V>(
  rules: readonly SettingRule<V>[],
  values: Partial<V>,
  name: SettingNames<V>,
): ConfigProblem[] {
  return rules.flatMap((rule) => {
    if (rule.reads.some((key) => values[key] === undefined)) return [];
    const message = rule.problem(values as V, name);
    const [first] = rule.reads;
    return message === undefined || first === undefined ? [] : [{ env: name(first), message }];
  });
}

/**
 * A rule of the timeout hierarchy across settings, "inner layers wait less": the sum of `inner`
 * stays strictly below `outer`, each a value in milliseconds. Stated once for a daemon and its
 * library, like a {@link SettingRule}; {@link budgetRules} makes the BudgetRules that are checked
 * and logged.
 */
export interface TimeoutRule<V> {
  readonly inner: readonly NumericKey<V>[];
  readonly outer: NumericKey<V>;
  readonly why: string;
}

/** The BudgetRules of `rules` on `values`, each timeout named by `name`; a rule reading a value not given is left out. */
export function budgetRules<V>(
  rules: readonly TimeoutRule<V>[],
  values: Partial<V>,
  name: SettingNames<V>,
): BudgetRule[] {
  const timeout = (key: NumericKey<V>): Timeout | undefined => {
    const ms = values[key];
    return typeof ms === "number" ? { env: name(key), ms } : undefined;
  };
  return rules.flatMap((rule) => {
    const inner = rule.inner.map(timeout);
    const outer = timeout(rule.outer);
    if (outer === undefined || inner.some((part) => part === undefined)) return [];
    return [{ inner: inner as Timeout[], outer, why: rule.why }];
  });
}
