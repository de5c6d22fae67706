import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { TSX_IMPORT } from "./child.js";

export const repoPath = (relative: string) => fileURLToPath(new URL(`../../${relative}`, import.meta.url));

export interface BenchDaemon {
  readonly child: ChildProcess;
  /** The first log line whose `msg` is the awaited one, parsed; rejects if the process exits first. */
  readonly ready: Promise<Record<string, unknown>>;
}

/**
 * One of our daemons (or a peer server) as a real process from its TypeScript entry, logging at
 * info on stdout; `ready` resolves on the log line `readyMsg` (`started`, or `listening` with the
 * port of an HTTP server).
 */
export function spawnDaemon(entry: string, env: Record<string, string>, readyMsg = "started"): BenchDaemon {
  const child = spawn(
    process.execPath,
    [
      "--disable-warning=NodeVersionSupportWarning",
      "--conditions=development",
      "--import",
      TSX_IMPORT,
      repoPath(entry),
    ],
    {
      env: {
        ...process.env,
        NODE_NO_WARNINGS: "1",
        OPS_PORT: "0",
        OPS_HOST: "127.0.0.1",
        LOG_LEVEL: "info",
        ...env,
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const ready = new Promise<Record<string, unknown>>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NonNullable<ChildProcess["stdout"]> });
    lines.on("line", (line) => {
      if (!line.includes(`"msg":"${readyMsg}"`)) return;
      resolve(JSON.parse(line) as Record<string, unknown>);
    });
    child.once("exit", (code) =>
      reject(new Error(`${entry} exited (${code}) before it logged "${readyMsg}"`)),
    );
  });
  ready.catch(() => {});
  return { child, ready };
}
