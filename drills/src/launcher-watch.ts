import { execFileSync } from "node:child_process";
import fs from "node:fs";

/** One process above ours: its id, its parent's, and its command line. */
interface Ancestor {
  readonly pid: number;
  readonly ppid: number;
  readonly command: string;
}

const HAS_PROC = fs.existsSync("/proc/self/stat");

function readAncestor(pid: number): Ancestor | undefined {
  try {
    if (HAS_PROC) {
      // The command name in field 2 may hold spaces and parentheses: the parent id follows the last ")".
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const command = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
      return { pid, ppid, command };
    }
    const [ppid = "", ...command] = execFileSync("ps", ["-o", "ppid=,command=", "-p", String(pid)], {
      encoding: "utf8",
    })
      .trim()
      .split(/\s+/);
    return { pid, ppid: Number(ppid), command: command.join(" ") };
  } catch {
    return undefined;
  }
}

// pnpm, npm and tsx (each a node script, or a binary of that name) and the `sh -c` they run scripts in.
const LAUNCHER =
  /(^|[\s/])(pnpm|npm|npx|tsx)(\.c?js|\.mjs)?(\s|$)|\/(pnpm|npm|tsx)\/(bin|dist)\/|^(\S*\/)?(ba|da)?sh -c /;

/** The chain of launchers above this process, nearest first; stops at the first process that is not one. */
function launchers(): readonly number[] {
  const chain: number[] = [];
  let ancestor = readAncestor(process.ppid);
  while (ancestor && ancestor.pid > 1 && LAUNCHER.test(ancestor.command)) {
    chain.push(ancestor.pid);
    ancestor = readAncestor(ancestor.ppid);
  }
  return chain;
}

function isAlive(pid: number): boolean {
  if (HAS_PROC) {
    try {
      // An exited launcher that its own parent has not reaped yet is still listed, as a zombie.
      const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
      return stat[stat.lastIndexOf(")") + 2] !== "Z";
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Calls `onGone` once when any process that launched this one (`pnpm stack` → sh → pnpm → sh → tsx)
 * has exited. pnpm does not pass SIGTERM or SIGHUP on to the script it runs: it exits and leaves the
 * script running, re-parented, with its servers. Watching the launchers turns their exit into the
 * stop they were asked for. Polls every `intervalMs`; returns the function that stops watching.
 */
export function onLauncherExit(onGone: () => void, intervalMs: number): () => void {
  const watched = launchers();
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent && watched.every(isAlive)) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
