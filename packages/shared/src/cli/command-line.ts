import { type ParseArgsConfig, parseArgs } from "node:util";

type Options = NonNullable<ParseArgsConfig["options"]>;

export interface CommandLine {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

/** sysexits' EX_USAGE, beside the daemons' EX_CONFIG (78): the command was called wrongly. */
export const USAGE_ERROR_EXIT_CODE = 64;

/**
 * Parses a command's arguments; `--help` prints the usage on stdout and exits 0, a bad argument
 * prints the reason and the usage on stderr and exits 64.
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
  process.exit(USAGE_ERROR_EXIT_CODE);
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

const DURATION = /^(\d+(?:\.\d+)?)(ms|s)?$/;

/** A `--name DURATION` option: `500ms`, `2.5s` or a bare number of seconds, ≥ 0; in milliseconds. */
export function durationOption(
  usage: string,
  name: string,
  value: string | boolean | undefined,
): number | undefined {
  if (value === undefined) return undefined;
  const match = typeof value === "string" ? DURATION.exec(value.trim()) : null;
  if (!match) {
    return usageError(usage, `--${name} must be a duration such as 5, 2.5s or 500ms, got "${String(value)}"`);
  }
  const amount = Number(match[1]);
  return match[2] === "ms" ? amount : amount * 1000;
}
