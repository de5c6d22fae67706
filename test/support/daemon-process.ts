import { type ChildProcess, spawn } from "node:child_process";
import { expect } from "vitest";
import { repoPath } from "./repo-path.js";

export type LogLine = Record<string, unknown> & { msg?: string };

export interface DaemonProcess {
  readonly child: ChildProcess;
  /** Every JSON log line written to stdout so far. */
  readonly lines: LogLine[];
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Polls until a line with this `msg` (and matching fields) appears, and returns it. */
  waitForLog(msg: string, fields?: Record<string, unknown>, timeoutMs?: number): Promise<LogLine>;
}

/**
 * Starts a TypeScript entry point as a real OS process, the way a container runs a daemon (sources
 * through tsx instead of a build). stdout is parsed as pino JSON lines.
 */
export function startDaemonProcess(
  entry: string,
  env: Record<string, string>,
  args: string[] = [],
): DaemonProcess {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "--conditions=development", repoPath(entry), ...args],
    {
      env: { ...process.env, OPS_HOST: "127.0.0.1", OPS_PORT: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const lines: LogLine[] = [];
  let stderr = "";
  let pending = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    pending += chunk.toString();
    const parts = pending.split("\n");
    pending = parts.pop() ?? "";
    for (const part of parts) {
      if (!part.trim()) continue;
      try {
        lines.push(JSON.parse(part) as LogLine);
      } catch {
        lines.push({ msg: "(unparsed stdout)", text: part });
      }
    }
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  const matches = (line: LogLine, msg: string, fields: Record<string, unknown>) =>
    line.msg === msg && Object.entries(fields).every(([key, value]) => line[key] === value);
  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    async waitForLog(msg, fields = {}, timeoutMs = 20_000) {
      await expect
        .poll(() => lines.some((line) => matches(line, msg, fields)), {
          timeout: timeoutMs,
          message: `waiting for log "${msg}" from ${entry}; stderr: ${stderr.slice(-500)}`,
        })
        .toBe(true);
      return lines.find((line) => matches(line, msg, fields)) as LogLine;
    },
  };
}
