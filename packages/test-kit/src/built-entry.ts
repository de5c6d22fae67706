import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { killWithThisProcess } from "@outbox/devstack";
import { expect } from "vitest";
import { collectLogLines, type LogLine } from "./log-lines.js";

/** A built entry point running as its own process, with what it said. */
export interface BuiltEntryProcess {
  /** The folder and the entry point (`relay dist/main.js`): what a failed wait names. */
  readonly name: string;
  readonly child: ChildProcess;
  readonly lines: LogLine[];
  stderr(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `node <entry>` in `directory`, exactly as an image's CMD runs it: plain node, no loader, no
 * `development` condition, and an environment holding nothing but what is passed here (vitest's
 * own NODE_OPTIONS must not leak in). For packaged daemons and applications built outside the
 * workspace.
 */
export function startBuiltEntry(
  directory: string,
  entry: string,
  env: Readonly<Record<string, string>>,
): BuiltEntryProcess {
  const child = spawn(process.execPath, [entry], {
    cwd: directory,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", NODE_ENV: "production", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // However the test process ends, the entry point does not outlive it.
  killWithThisProcess(child);
  const lines: LogLine[] = [];
  let stderr = "";
  collectLogLines(child, lines);
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return { name: `${path.basename(directory)} ${entry}`, child, lines, stderr: () => stderr, exited };
}

/**
 * SIGTERM to each, at once, as a platform stops its tasks, and what a clean stop is expected to
 * look like: exit 0, a `drained` line, the `exit` line last. Resolves with each one's `drained` line.
 */
export async function expectCleanStops(processes: readonly BuiltEntryProcess[]): Promise<LogLine[]> {
  for (const running of processes) running.child.kill("SIGTERM");
  const exits = await Promise.all(processes.map((running) => running.exited));
  return processes.map((running, at) => {
    expect(exits[at], `${running.name}: ${running.stderr().slice(-800)}`).toEqual({ code: 0, signal: null });
    expect(running.lines.at(-1), running.name).toMatchObject({ msg: "exit", exitCode: 0 });
    const drained = running.lines.find((line) => line.msg === "drained");
    expect(drained, running.name).toBeDefined();
    return drained ?? {};
  });
}
