import { type ConfigProblem, refuseOptions } from "./config-error.js";
import type { Setting } from "./setting.js";

/** A setting's default; a setting without one (a required variable) is no library option's. */
export function settingDefault<T>(definition: Setting<T>): T {
  if (definition.default === undefined) throw new Error(`${definition.env} has no default`);
  return definition.default;
}

/**
 * A library's numeric options, each the setting the daemon fills it from (`createRelay({ batchSize })`
 * is RELAY_BATCH_SIZE): its range, its default and its documentation are that setting's.
 */
export type OptionSettings = Readonly<Record<string, Setting<number>>>;

export type OptionValues<T extends OptionSettings> = { -readonly [K in keyof T]: number };

/**
 * Each option as given, checked by its setting's own rules, or that setting's default when not
 * given; and the problem of each value the setting refuses (`batchSize: must be between 1 and 1000
 * (got 0)`), under the option's `name`. A value the daemon refuses at start-up is refused here too,
 * for the same reason, and the library's defaults cannot drift from the documented ones. A refused
 * option holds its default meanwhile.
 */
export function optionValues<T extends OptionSettings>(
  settings: T,
  given: { readonly [K in keyof T]?: number | undefined },
  name: (option: keyof T & string) => string = (option) => option,
): { values: OptionValues<T>; problems: ConfigProblem[] } {
  const values: Record<string, number> = {};
  const problems: ConfigProblem[] = [];
  for (const [option, definition] of Object.entries(settings)) {
    const value = given[option];
    values[option] = settingDefault(definition);
    if (value === undefined) continue;
    const parsed = definition.schema.safeParse(String(value));
    if (parsed.success) values[option] = parsed.data;
    else {
      const reason = parsed.error.issues.map((issue) => issue.message).join("; ");
      problems.push({ env: name(option), message: `${reason} (got ${value})` });
    }
  }
  return { values: values as OptionValues<T>, problems };
}

/** One option ({@link optionValues}); `invalid` makes the error thrown for a value its setting refuses. */
export function numericOption(
  definition: Setting<number>,
  given: number | undefined,
  name: string,
  invalid: (message: string) => Error,
): number {
  const { values, problems } = optionValues({ [name]: definition }, { [name]: given });
  refuseOptions(problems, invalid);
  return values[name] as number;
}

/** A bound the library derives when not given (no setting of its own): a whole number from 1. */
export function positiveOption(name: string, value: number): ConfigProblem[] {
  return Number.isInteger(value) && value >= 1
    ? []
    : [{ env: name, message: `must be a positive integer (got ${value})` }];
}
