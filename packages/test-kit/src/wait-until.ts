import { sleep } from "@outbox/shared";
import type { DaemonProcess } from "./daemon-process.js";

/** A process a wait watches: a daemon from source, or a built entry point. */
export type WatchedProcess = Pick<DaemonProcess, "name" | "child" | "lines" | "stderr">;

export interface WaitOptions {
  readonly timeoutMs?: number;
  readonly intervalMs?: number;
  /** Processes that must stay up meanwhile: one exiting ends the wait with its stderr. */
  readonly alive?: readonly WatchedProcess[];
}

const isUp = ({ child }: WatchedProcess) => child.exitCode === null && child.signalCode === null;

/** What each process said last, for a failure message. */
function lastWords(processes: readonly WatchedProcess[]): string {
  return processes
    .map(
      (running) =>
        `${running.name}: ${JSON.stringify(running.lines.slice(-5))} ${running.stderr().slice(-800)}`,
    )
    .join("; ");
}

/**
 * Polls `condition` every `intervalMs` until it answers something truthy, and resolves with that;
 * throws naming `what` after `timeoutMs`, or as soon as a process of `alive` exits.
 */
export async function waitUntil<T>(
  what: string,
  condition: () => Promise<T | false | null | undefined> | T | false | null | undefined,
  { timeoutMs = 60_000, intervalMs = 25, alive = [] }: WaitOptions = {},
): Promise<T> {
  const giveUpAt = performance.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value;
    const exited = alive.find((running) => !isUp(running));
    if (exited) throw new Error(`${exited.name} exited while waiting for ${what}; ${lastWords([exited])}`);
    if (performance.now() > giveUpAt) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${alive.length > 0 ? `; last words ${lastWords(alive)}` : ""}`,
      );
    }
    await sleep(intervalMs);
  }
}
