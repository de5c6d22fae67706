import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { describeError } from "@outbox/client/internal";
import type { SettingsSpec } from "../config/setting.js";
import { captureEarlyStopSignals } from "../lifecycle/early-stop.js";
import { EXIT_OK, EXIT_USAGE } from "../lifecycle/exit-codes.js";
import { packageVersion } from "../lifecycle/package-version.js";

/**
 * The command-line conventions of every program in the repository (daemons, their one-shot
 * commands, `pnpm migrate|drill|start|simulate|plan`):
 * - `--help` / `-h` prints the usage on stdout and exits 0;
 * - `--version` prints the version of the program's package on stdout and exits 0;
 * - a usage error (unknown command, option or argument, a bad value) prints the reason and the
 *   usage on stderr and exits 64.
 * This module imports nothing heavy: an entry point parses its command line before loading the rest.
 */

/** parseArgs' options, without `multiple`: every value is one string or boolean. */
type Options = Readonly<
  Record<
    string,
    { readonly type: "string" | "boolean"; readonly short?: string; readonly default?: string | boolean }
  >
>;

export interface CommandLine {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

/** sysexits' EX_USAGE, beside the daemons' EX_CONFIG (78): the command was called wrongly. */

const CONVENTIONS: Options = {
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
};

/** The version of the package the running program's entry point belongs to. */
function programVersion(): string {
  const entry = process.argv[1];
  return entry === undefined ? "0.0.0" : packageVersion(pathToFileURL(path.resolve(entry)).href);
}

function exitWith(text: string): never {
  process.stdout.write(`${text}\n`);
  process.exit(EXIT_OK);
}

/**
 * Parses a command's arguments (`args`, by default the process's). `--help` and `--version` win
 * over anything else on the line; otherwise a bad argument is a usage error.
 */
export function parseCommandLine(
  usage: string,
  options: Options,
  args: readonly string[] = process.argv.slice(2),
): CommandLine {
  const config = { args: [...args], allowPositionals: true, options: { ...options, ...CONVENTIONS } };
  const loose = parseArgs({ ...config, strict: false });
  if (loose.values.help === true) exitWith(usage);
  if (loose.values.version === true) exitWith(programVersion());
  try {
    return parseArgs(config);
  } catch (error) {
    // Node's first sentence says it ("Unknown option '--bogus'"); the rest is advice about `--`.
    const reason = describeError(error).split(". ")[0] ?? "";
    return usageError(usage, reason);
  }
}

export function usageError(usage: string, reason: string): never {
  process.stderr.write(`${reason}\n${usage}\n`);
  process.exit(EXIT_USAGE);
}

/** One command of a program with several (`relay status`); its usage and help are derived from these. */
export interface Command {
  /** One line: what it does. */
  readonly summary: string;
  /** What follows the command's name in its usage line, e.g. `[--json]`. */
  readonly synopsis?: string;
  /** More lines for the command's own `--help`: its options, exit codes (the environment: `settings`). */
  readonly details?: string;
  readonly options?: Options;
  /**
   * The settings the command reads. Its usage lists their variables, from the spec the command
   * parses, so the two cannot drift. A function, because a spec loads zod and more: it is called
   * for this command only, never for the program's usage. (A daemon's `run` names its docs page.)
   */
  readonly settings?: () => Promise<SettingsSpec>;
  /** Resolves with the exit code (a daemon never resolves: it exits on its own). */
  run(line: CommandLine, usage: string): Promise<number>;
}

/**
 * Commands under one name (`consumer dlq list`): `NAME GROUP COMMAND [OPTIONS]`, each listed in the
 * program's usage as a command of its own; there is no default command inside a group.
 */
export interface CommandGroup {
  readonly commands: Readonly<Record<string, Command>>;
}

/** A program with commands: `NAME [COMMAND] [OPTIONS]`, `COMMAND` being `defaultCommand` when left out. */
export interface Program {
  readonly name: string;
  /** Absent in a group (`consumer dlq`): a command must be named. */
  readonly defaultCommand?: string;
  readonly commands: Readonly<Record<string, Command | CommandGroup>>;
}

function isGroup(entry: Command | CommandGroup): entry is CommandGroup {
  return "commands" in entry;
}

/** A group as a program of its own, its name the program's and the group's. */
function groupProgram(program: Program, name: string, group: CommandGroup): Program {
  return { name: `${program.name} ${name}`, commands: group.commands };
}

/** The program's commands, a group's listed one by one under their full names. */
function listedCommands(program: Program): [Program, string, Command][] {
  return Object.entries(program.commands).flatMap(([name, entry]): [Program, string, Command][] => {
    if (!isGroup(entry)) return [[program, name, entry]];
    const group = groupProgram(program, name, entry);
    return Object.entries(entry.commands).map(([inner, command]): [Program, string, Command] => [
      group,
      inner,
      command,
    ]);
  });
}

/**
 * The `run` command of a daemon. It takes over SIGTERM before `load` brings in anything heavy (AWS
 * SDK, pg, Fastify…): a stop that arrives during start-up is then a clean stop with exit 0, not a
 * kill by the default action. `load` imports the daemon and runs it; the daemon exits on its own.
 */
export function daemonCommand(options: {
  readonly summary: string;
  /** Where its environment variables are documented, e.g. `docs/relay.md`. */
  readonly docs: string;
  readonly load: () => Promise<unknown>;
}): Command {
  return {
    summary: options.summary,
    details: `
Configuration comes from environment variables (${options.docs}); invalid configuration exits 78
after listing every problem. Exit 0 after a signal-initiated stop, 1 on a crash.`,
    async run() {
      captureEarlyStopSignals();
      await options.load();
      return EXIT_OK;
    },
  };
}

function usageLine(program: Program, name: string, command: Command): string {
  const called = name === program.defaultCommand ? `[${name}]` : name;
  return [program.name, called, command.synopsis].filter(Boolean).join(" ");
}

/** The program's usage: one line per command, then the conventions. */
export function programUsage(program: Program): string {
  const entries = listedCommands(program);
  const lines = entries.map(([owner, name, command]) => usageLine(owner, name, command));
  const width = Math.max(...lines.map((line) => line.length));
  const rows = entries.map(
    ([, , command], index) =>
      `${index === 0 ? "usage:" : "      "} ${lines[index]?.padEnd(width)}  ${command.summary}`,
  );
  return [
    ...rows,
    "",
    `\`${program.name} COMMAND --help\` prints one command's usage, \`${program.name} --version\` the version.`,
  ].join("\n");
}

/** The part of a usage that names the environment a program reads: every variable of `settings`. */
export function settingsUsage(settings: SettingsSpec): string {
  return [
    "Reads only these variables; invalid configuration exits 78 after listing every problem:",
    ...Object.values(settings).map((definition) => `  ${definition.env}`),
  ].join("\n");
}

/** One command's usage: its line, what it does, its details and the `settings` it reads. */
export function commandUsage(
  program: Program,
  name: string,
  command: Command,
  settings?: SettingsSpec,
): string {
  const environment = settings === undefined ? undefined : `\n${settingsUsage(settings)}`;
  return [`usage: ${usageLine(program, name, command)}`, "", command.summary, command.details, environment]
    .filter((part) => part !== undefined)
    .join("\n");
}

/**
 * Runs the command the process's arguments name, following the conventions above, and resolves with
 * its exit code. `NAME --help` prints the program's usage, `NAME COMMAND --help` the command's.
 */
export async function runProgram(
  program: Program,
  args: readonly string[] = process.argv.slice(2),
): Promise<number> {
  const usage = programUsage(program);
  const [first] = args;
  if (first?.startsWith("-")) {
    parseCommandLine(usage, {}, args);
    return usageError(usage, `expected a command, got "${args.join(" ")}"`);
  }
  const name = first ?? program.defaultCommand;
  if (name === undefined) return usageError(usage, "expected a command");
  const command = Object.hasOwn(program.commands, name) ? program.commands[name] : undefined;
  if (command === undefined) return usageError(usage, `unknown command: ${name}`);
  if (isGroup(command)) return runProgram(groupProgram(program, name, command), args.slice(1));
  const ownUsage = commandUsage(program, name, command, await command.settings?.());
  const line = parseCommandLine(ownUsage, command.options ?? {}, args.slice(1));
  if (line.positionals.length > 0) usageError(ownUsage, `unexpected argument: ${line.positionals.join(" ")}`);
  return command.run(line, ownUsage);
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
