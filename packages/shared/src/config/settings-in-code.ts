import type { ConfigProblem } from "./config-error.js";
import type { SettingsSpec } from "./setting.js";

/**
 * Settings an application gives in code (`runConsumer({ settings })`), keyed by their environment
 * variables' names, as the docs' tables list them: a value is the text the variable would hold, or
 * a number or boolean written as that text.
 */
export type SettingsInCode = Readonly<Record<string, string | number | boolean>>;

/**
 * The environment a program started from code reads: `env` with `settings` over it, so both go
 * through the same parsing and checks as the daemon's environment, and a value fixed in code is not
 * undone by a stray variable. A key that is none of `spec`'s variables is a problem: a misspelt
 * setting would otherwise be dropped without a word.
 */
export function environmentWith(
  spec: SettingsSpec,
  settings: SettingsInCode,
  env: Readonly<Record<string, string | undefined>>,
): { env: Readonly<Record<string, string | undefined>>; problems: ConfigProblem[] } {
  const known = new Set(Object.values(spec).flatMap((definition) => [definition.env, definition.formerEnv]));
  const problems = Object.keys(settings)
    .filter((name) => !known.has(name))
    .map((name) => ({ env: name, message: "is not a setting of this program (given in code)" }));
  const given = Object.fromEntries(Object.entries(settings).map(([name, value]) => [name, String(value)]));
  return { env: { ...env, ...given }, problems };
}
