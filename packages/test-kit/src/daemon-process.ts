import { type ChildProcess, spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import { killWithThisProcess } from "@outbox/devstack";
import { HANG_LIMIT_MS } from "./hang-limits.js";
import { collectLogLines, type LogLine } from "./log-lines.js";
import { repoPath, TSX_IMPORT } from "./repo-path.js";

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface DaemonProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Every JSON log line written to stdout so far, in order. */
  readonly lines: LogLine[];
  stderr(): string;
  readonly exited: Promise<Exit>;
  /** The first line with this `msg` whose fields match, once it is written. Rejects after `timeoutMs`. */
  waitForLog(msg: string, fields?: Record<string, unknown>, timeoutMs?: number): Promise<LogLine>;
  /**
   * Sends `signal` and resolves with the exit and how long the stop took: by the daemon's own clock
   * (runDaemon's `draining` line to its `exit` line) when it logged both, else from the signal as
   * seen here, which a loaded machine lengthens by however late this process hears of the exit.
   */
  stop(signal: NodeJS.Signals): Promise<Exit & { readonly stopMs: number }>;
}

/** Every daemon this process has started, for the live progress board and for Ctrl-C clean-up. */
const started: DaemonProcess[] = [];

export function startedDaemons(): readonly DaemonProcess[] {
  return started;
}

export function isRunning(daemon: DaemonProcess): boolean {
  return daemon.child.exitCode === null && daemon.child.signalCode === null;
}

/** SIGKILLs every daemon still running (Ctrl-C of the demo) and waits until they are gone. */
export async function killRunningDaemons(): Promise<void> {
  await Promise.all(
    started.map(async (daemon) => {
      if (isRunning(daemon)) daemon.child.kill("SIGKILL");
      await daemon.exited;
    }),
  );
}

function matches(line: LogLine, msg: string, fields: Record<string, unknown>): boolean {
  return line.msg === msg && Object.entries(fields).every(([key, value]) => line[key] === value);
}

export interface DaemonOptions {
  /** What errors and the progress board call it; the entry point by default. */
  readonly name?: string;
  /** Command-line arguments of the entry point. */
  readonly args?: readonly string[];
  /** Node's own flags, before the loader. */
  readonly nodeArgs?: readonly string[];
  /**
   * `collect` keeps stderr for `stderr()` and the errors of `waitForLog`; `inherit` lets it through
   * to ours, for a long run watched live (the bench).
   */
  readonly stderr?: "collect" | "inherit";
}

/**
 * Starts a daemon's TypeScript entry point as a real OS process, the way a container runs it
 * (sources through tsx, the same `main.ts` the image builds). stdout is read as pino JSON lines.
 */
export function startDaemonProcess(
  entry: string,
  env: Readonly<Record<string, string>>,
  options: DaemonOptions = {},
): DaemonProcess {
  const { name = entry, args = [], nodeArgs = [] } = options;
  const child = spawn(
    process.execPath,
    [...nodeArgs, "--import", TSX_IMPORT, "--conditions=development", repoPath(entry), ...args],
    {
      env: { ...process.env, OPS_HOST: "127.0.0.1", OPS_PORT: "0", ...env },
      stdio: ["ignore", "pipe", options.stderr === "inherit" ? "inherit" : "pipe"],
    },
  );
  // However the test process ends (SIGKILL, its runner gone), the daemon does not outlive it.
  killWithThisProcess(child);
  const lines: LogLine[] = [];
  const waiters = new Set<() => void>();
  let stderr = "";
  collectLogLines(child, lines, () => {
    for (const wake of waiters) wake();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<Exit>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
    for (const wake of waiters) wake();
  });

  const waitForLog = (
    msg: string,
    fields: Record<string, unknown> = {},
    timeoutMs: number = HANG_LIMIT_MS.processStart,
  ) =>
    new Promise<LogLine>((resolve, reject) => {
      const check = () => {
        const found = lines.find((line) => matches(line, msg, fields));
        if (found) {
          done();
          resolve(found);
        } else if (hasExited) {
          done();
          reject(
            new Error(
              `${name} exited before logging "${msg}"; last lines: ${JSON.stringify(lines.slice(-3))}; stderr: ${stderr.slice(-800)}`,
            ),
          );
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(
          new Error(`${name} did not log "${msg}" within ${timeoutMs} ms; stderr: ${stderr.slice(-800)}`),
        );
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  const daemon: DaemonProcess = {
    name,
    child,
    lines,
    stderr: () => stderr,
    exited,
    waitForLog,
    async stop(signal) {
      const signalledAt = performance.now();
      child.kill(signal);
      const exit = await exited;
      const timeOf = (msg: string) => Date.parse(String(lines.findLast((line) => line.msg === msg)?.time));
      const ownStopMs = timeOf("exit") - timeOf("draining");
      return {
        ...exit,
        stopMs: Number.isNaN(ownStopMs) ? Math.round(performance.now() - signalledAt) : ownStopMs,
      };
    },
  };
  started.push(daemon);
  return daemon;
}
