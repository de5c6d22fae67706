import { type ChildProcess, execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { collectLogLines, type LogLine } from "@outbox/drills";

export type { LogLine } from "@outbox/drills";

const run = promisify(execFile);

/** Runs pnpm from the repository root (offline: the store is warm after `pnpm install`). */
export async function pnpm(root: string, args: readonly string[]): Promise<void> {
  await run("pnpm", [...args], {
    cwd: root,
    env: { ...process.env, CI: "true" },
    maxBuffer: 16 * 1024 * 1024,
  });
}

export interface PackagedDaemon {
  readonly child: ChildProcess;
  readonly lines: LogLine[];
  stderr(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `node dist/main.js` in a deployed directory, exactly as the image's CMD runs it: plain node, no
 * loader, no `development` condition, and an environment holding nothing but what is passed here
 * (vitest's own NODE_OPTIONS must not leak in).
 */
export function startPackaged(directory: string, env: Readonly<Record<string, string>>): PackagedDaemon {
  const child = spawn(process.execPath, ["dist/main.js"], {
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
