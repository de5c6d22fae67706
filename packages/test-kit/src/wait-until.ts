import { sleep } from "@outbox/shared";
import { type DaemonProcess, isRunning } from "./daemon-process.js";

export interface WaitOptions {
  readonly timeoutMs?: number;
  readonly intervalMs?: number;
  /** Daemons that must stay up meanwhile: one exiting ends the wait with its stderr. */
  readonly alive?: readonly DaemonProcess[];
}

/** Polls `condition` every `intervalMs` until it holds; throws naming `what` after `timeoutMs`. */
export async function waitUntil(
  what: string,
  condition: () => Promise<boolean> | boolean,
  { timeoutMs = 60_000, intervalMs = 25, alive = [] }: WaitOptions = {},
): Promise<void> {
  const giveUpAt = performance.now() + timeoutMs;
  while (!(await condition())) {
    const exited = alive.find((daemon) => !isRunning(daemon));
    if (exited) {
      throw new Error(
        `${exited.name} exited while waiting for ${what}; stderr: ${exited.stderr().slice(-800)}`,
      );
    }
    if (performance.now() > giveUpAt) {
      const tails = alive
        .map((daemon) => `${daemon.name}: ${JSON.stringify(daemon.lines.slice(-3))}`)
        .join("; ");
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${tails ? `; last lines ${tails}` : ""}`,
      );
    }
    await sleep(intervalMs);
  }
}
