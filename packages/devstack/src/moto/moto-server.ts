import { type ChildProcess, spawn } from "node:child_process";
import { setTimeout as delay } from "node:timers/promises";
import { killWithThisProcess } from "../child-watchdog.js";
import { cleanUpAtExit } from "../exit-cleanup.js";
import { freePort } from "../net/free-port.js";
import { stopServerProcess } from "../stop-server-process.js";

export interface MotoServerOptions {
  /** Default `moto_server` on the PATH (Python's moto, `pip install 'moto[server]'`). */
  readonly command?: string;
  /** How long the server may take to answer its first request; default 30 s (a cold Python start). */
  readonly startTimeoutMs?: number;
}

/** A moto server on 127.0.0.1, serving S3 (and every other service moto mocks) on one port. */
export interface RunningMotoServer {
  readonly endpoint: string;
  readonly port: number;
  stop(): Promise<void>;
}

const PROBE_TIMEOUT_MS = 1_000;
const PROBE_INTERVAL_MS = 100;
/** Another process may take the free port before moto binds it: a few tries with fresh ports. */
const BIND_ATTEMPTS = 3;

/** The exit-time clean-up of each server still running, to unregister when it is stopped. */
const running = new Map<ChildProcess, () => void>();

async function stopChild(child: ChildProcess): Promise<void> {
  running.get(child)?.();
  running.delete(child);
  await stopServerProcess(child);
}

/** Resolves once the server answers any HTTP request; rejects if it exits or the time runs out. */
async function answering(child: ChildProcess, endpoint: string, timeoutMs: number, stderr: () => string) {
  const until = performance.now() + timeoutMs;
  let exitedEarly = false;
  child.once("exit", () => {
    exitedEarly = true;
  });
  while (performance.now() < until) {
    if (exitedEarly) throw new Error(`moto_server exited before answering: ${stderr() || "(no output)"}`);
    try {
      const answer = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
      await answer.body?.cancel();
      return;
    } catch {
      // Not listening yet.
    }
    await delay(PROBE_INTERVAL_MS);
  }
  throw new Error(
    `moto_server did not answer on ${endpoint} within ${timeoutMs} ms: ${stderr() || "(no output)"}`,
  );
}

async function startOnce(command: string, startTimeoutMs: number): Promise<RunningMotoServer> {
  const port = await freePort();
  const child = spawn(command, ["-H", "127.0.0.1", "-p", String(port)], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  running.set(
    child,
    cleanUpAtExit(() => child.kill("SIGKILL")),
  );
  killWithThisProcess(child);
  // Kept for the error message only: the server logs every request on stderr.
  let lastOutput = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    lastOutput = (lastOutput + chunk).slice(-2_000);
  });
  const spawnFailed = new Promise<never>((_, reject) =>
    child.once("error", (error) =>
      reject(
        new Error(
          `cannot run ${command}: ${error.message} (the embedded stack's S3; install it with pip install 'moto[server]')`,
        ),
      ),
    ),
  );
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await Promise.race([answering(child, endpoint, startTimeoutMs, () => lastOutput.trim()), spawnFailed]);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  // Its request log is noise once it runs; a full pipe would block it.
  child.stderr?.removeAllListeners("data").resume();
  return { endpoint, port, stop: () => stopChild(child) };
}

/** Starts `moto_server` as a child process and waits until it answers. */
export async function startMotoServer(options: MotoServerOptions = {}): Promise<RunningMotoServer> {
  const command = options.command ?? "moto_server";
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  let lastError: unknown;
  for (let attempt = 1; attempt <= BIND_ATTEMPTS; attempt += 1) {
    try {
      return await startOnce(command, startTimeoutMs);
    } catch (error) {
      lastError = error;
      if (error instanceof Error && error.message.startsWith("cannot run")) break;
    }
  }
  throw lastError;
}
