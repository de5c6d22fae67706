/**
 * The last line of defence against servers left behind: whatever child server this process
 * started (embedded Postgres, moto) is killed when the process ends without having stopped it —
 * a crash, a forced `process.exit`, a signal nobody handles. Only synchronous work is possible
 * then, hence a kill (and a synchronous removal of a data dir) instead of a clean stop.
 *
 * The `exit` listener goes *first*: the test runner's own `exit` listener calls `process.exit()`
 * again (vitest does, on SIGINT/SIGTERM and after an uncaught exception), which ends the process
 * on the spot, so a listener behind it never runs and its servers outlive the run.
 */
type Cleanup = () => void;

const cleanups = new Set<Cleanup>();

function cleanUpNow(): void {
  for (const cleanup of cleanups) {
    try {
      cleanup();
    } catch {
      // One server that cannot be killed must not spare the others.
    }
  }
  cleanups.clear();
}
process.prependListener("exit", cleanUpNow);

// A signal the process does not handle itself kills it without an `exit` event. Ours cleans up
// and then lets the signal do exactly what it would have done (death by that signal); as soon as
// the process has a listener of its own, it owns the signal (and its `exit` runs ours) and ours
// stands aside. Ours goes first so that a `once` listener of the owner still counts when ours looks.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  const onUnhandledSignal = () => {
    if (process.listenerCount(signal) > 1) return;
    cleanUpNow();
    process.off(signal, onUnhandledSignal);
    process.kill(process.pid, signal);
  };
  process.prependListener(signal, onUnhandledSignal);
}

// Output whose reader has gone (`vitest run | sed`, the pipeline cut from outside): a write fails
// with EPIPE, an `error` event nobody listens to, and the process dies of an uncaught exception in
// whatever listener happens to write next. As a command whose reader is gone does (SIGPIPE), the
// process ends, but cleaned up: 141 is 128 + SIGPIPE, the shell's figure for that death. As for
// signals, a listener of the process's own owns the stream's errors.
for (const stream of [process.stdout, process.stderr]) {
  const onClosedOutput = (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE" || stream.listenerCount("error") > 1) return;
    cleanUpNow();
    process.exit(141);
  };
  stream.prependListener("error", onClosedOutput);
}

// A process forked with an IPC channel (a test runner's worker) whose parent has gone: nobody is
// left to read its results, and nothing else would end it (a runner dead of SIGKILL or of an
// exception never terminates its workers). It cleans up and dies; by SIGKILL, since vitest swaps
// `process.exit` for a stub while a test runs, and what has no clean-up here has the watchdog
// (child-watchdog.ts).
if (process.send !== undefined)
  process.once("disconnect", () => {
    cleanUpNow();
    process.kill(process.pid, "SIGKILL");
  });

/** Registers a synchronous clean-up for the process's end; the returned function unregisters it. */
export function cleanUpAtExit(cleanup: Cleanup): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}
