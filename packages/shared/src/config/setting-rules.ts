import type { ConfigProblem } from "./config-error.js";

/**
 * How a reader names a setting: a daemon's operator by its variable (RELAY_LEASE_MS), a library
 * caller by its option (leaseMs). A rule's message names every setting it reads this way.
 */
export type SettingNames<V> = (key: keyof V & string) => string;

/**
 * A rule across settings, stated once for a daemon and for its library (a backoff's base ≤ its
 * cap, the delivery and its topics…): the settings it reads, the first being the one to change,
 * and what is wrong when `values` break it, or undefined. (The timeout hierarchy, sums of
 * timeouts, is a BudgetRule: it is logged at start as well as checked.)
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
