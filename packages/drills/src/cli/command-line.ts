import { type ParseArgsConfig, parseArgs } from "node:util";

type Options = NonNullable<ParseArgsConfig["options"]>;

export interface CommandLine {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

/**
 * Parses a drill command's arguments; `--help` prints the usage and exits 0, a bad argument prints
 * the reason and the usage and exits 2 (the convention for usage errors).
 */
export function parseCommandLine(usage: string, options: Options): CommandLine {
  try {
    const parsed: CommandLine = parseArgs({
      allowPositionals: true,
      options: { ...options, help: { type: "boolean", short: "h", default: false } },
    });
    if (parsed.values.help === true) {
      process.stdout.write(`${usage}\n`);
      process.exit(0);
    }
    return parsed;
  } catch (error) {
    return usageError(usage, error instanceof Error ? error.message : String(error));
  }
}

export function usageError(usage: string, reason: string): never {
  process.stderr.write(`${reason}\n${usage}\n`);
  process.exit(2);
}

/** A `--name N` option that must be a whole number ≥ `min`; `fallback` when absent. */
export function wholeNumberOption(
  usage: string,
  name: string,
  value: string | boolean | undefined,
  fallback: number,
  min = 1,
): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (typeof value !== "string" || !Number.isInteger(parsed) || parsed < min) {
    return usageError(usage, `--${name} must be a whole number ≥ ${min}, got "${String(value)}"`);
  }
  return parsed;
}

/** A fresh seed for the random moments; printed by the session so a run can be repeated. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 2 ** 31);
}
