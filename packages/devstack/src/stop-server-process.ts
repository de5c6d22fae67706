import type { ChildProcess } from "node:child_process";
import { setTimeout as delay } from "node:timers/promises";

/** How long a server process of the stack gets to exit on SIGTERM before SIGKILL. */
const STOP_TIMEOUT_MS = 5_000;

/** Resolves once `child` has exited (at once when it already has). */
function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/** SIGTERM, then SIGKILL if the server is still there after STOP_TIMEOUT_MS; resolves once it is gone. */
export async function stopServerProcess(child: ChildProcess): Promise<void> {
  const gone = exited(child);
  child.kill("SIGTERM");
  // Unref'd: a server that exits at once must not hold the process for the rest of the bound.
  const timer = delay(STOP_TIMEOUT_MS, "timeout" as const, { ref: false });
  if ((await Promise.race([gone.then(() => "exited" as const), timer])) === "timeout") {
    child.kill("SIGKILL");
    await gone;
  }
}
