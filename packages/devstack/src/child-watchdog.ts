import { type ChildProcess, spawn } from "node:child_process";
import type { Socket } from "node:net";

/**
 * The watchdog: a separate, detached process that holds the read end of a pipe from this one and a
 * list of this process's children. When the pipe closes — this process has ended, however it ended:
 * SIGKILL, a crash in an exit listener, a runner's worker terminated — it SIGKILLs the children
 * still listed and removes the folders listed with them. An exit listener cannot do that: nothing
 * runs in a process killed by SIGKILL. Detached (a process group of its own) and deaf to the
 * terminal's signals, so that the signal that ends this process does not end its watchdog first.
 */
const WATCHDOG = `
const { rmSync } = require("node:fs");
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => {});
const owned = new Map();
let pending = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  pending += chunk;
  for (let end = pending.indexOf("\\n"); end !== -1; end = pending.indexOf("\\n")) {
    const { pid, leftover, gone } = JSON.parse(pending.slice(0, end));
    pending = pending.slice(end + 1);
    if (gone) owned.delete(pid);
    else owned.set(pid, leftover);
  }
});
process.stdin.on("close", () => {
  for (const [pid, leftover] of owned) {
    try { process.kill(pid, "SIGKILL"); } catch {}
    if (leftover) try { rmSync(leftover, { recursive: true, force: true }); } catch {}
  }
  process.exit(0);
});
`;

let watchdog: Socket | undefined;

function watchdogInput(): Socket {
  if (watchdog) return watchdog;
  const child = spawn(process.execPath, ["-e", WATCHDOG], {
    detached: true,
    stdio: ["pipe", "ignore", "ignore"],
    // Only what node needs: vitest's NODE_OPTIONS (its loaders) must not load into the watchdog.
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  });
  // Neither the watchdog nor its pipe keeps this process alive; a failed write (it was killed from
  // outside) must not take this process down.
  child.unref();
  // A pipe the child was given: a socket on this side.
  const input = child.stdin as Socket;
  input.unref();
  input.on("error", () => {});
  watchdog = input;
  return input;
}

/**
 * `child` (and `leftover`, a folder it writes) does not outlive this process: should this process
 * end with `child` still running, however it ends, the watchdog SIGKILLs `child` and removes
 * `leftover`. A child that exits is struck off the list.
 */
export function killWithThisProcess(child: ChildProcess, leftover?: string): void {
  const { pid } = child;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const input = watchdogInput();
  input.write(`${JSON.stringify({ pid, leftover })}\n`);
  child.once("exit", () => input.write(`${JSON.stringify({ pid, gone: true })}\n`));
}
