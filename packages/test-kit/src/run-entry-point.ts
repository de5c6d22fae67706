import { execFile } from "node:child_process";
import fs from "node:fs";
import { expect } from "vitest";
import { HANG_LIMIT_MS } from "./hang-limits.js";
import { repoPath, TSX_IMPORT } from "./repo-path.js";

export interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a program's TypeScript entry point to its exit, as a real process the way the daemons'
 * tests start them (through tsx), and returns its exit code and both streams apart.
 */
export function runEntryPoint(
  entry: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<Finished> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", TSX_IMPORT, "--conditions=development", repoPath(entry), ...args],
      { env: { ...process.env, ...env }, timeout: HANG_LIMIT_MS.processStart },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The version `--version` must print: that of the package the entry point belongs to. */
export function versionOf(packageJson: string): string {
  return (JSON.parse(fs.readFileSync(repoPath(packageJson), "utf8")) as { version: string }).version;
}

/** `--help` or `--version`: the answer on stdout, nothing on stderr, exit 0. */
export function expectAnswer(run: Finished, stdout: RegExp): void {
  expect({ code: run.code, stderr: run.stderr }, run.stdout).toEqual({ code: 0, stderr: "" });
  expect(run.stdout).toMatch(stdout);
}

/** A usage error: the reason and then the usage on stderr, nothing on stdout, exit 64. */
export function expectUsageError(run: Finished, reason: string, usage: RegExp): void {
  expect({ code: run.code, stdout: run.stdout }, run.stderr).toEqual({ code: 64, stdout: "" });
  expect(run.stderr.startsWith(`${reason}\n`), run.stderr).toBe(true);
  expect(run.stderr.slice(reason.length + 1)).toMatch(usage);
}

/**
 * A daemon (or, with `args`, one of its commands) refusing its configuration: exit 78, nothing on
 * stdout; resolves with its stderr lines.
 */
export async function configRefusal(
  entry: string,
  env: Readonly<Record<string, string>>,
  args: readonly string[] = [],
): Promise<string[]> {
  const run = await runEntryPoint(entry, args, env);
  expect({ code: run.code, stdout: run.stdout }, run.stderr).toEqual({ code: 78, stdout: "" });
  return run.stderr.trim().split("\n");
}
