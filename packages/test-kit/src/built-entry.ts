import { type ChildProcess, spawn } from "node:child_process";
import { collectLogLines, type LogLine } from "./log-lines.js";

/** A built entry point running as its own process, with what it said. */
export interface BuiltEntryProcess {
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
  const lines: LogLine[] = [];
  let stderr = "";
  collectLogLines(child, lines);
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, lines, stderr: () => stderr, exited };
}
