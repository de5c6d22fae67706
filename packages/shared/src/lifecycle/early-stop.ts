/**
 * A stop can be requested before a daemon is ready to listen for it: loading the AWS SDK, kysely
 * and pg takes hundreds of milliseconds, and until a SIGTERM listener exists Node's default action
 * kills the process (exit by signal, which the platform records as a failure). A daemon's entry
 * point installs these listeners first — this module imports nothing — and loads the rest after;
 * `listenForStopRequests` then takes over and honours a signal that came early.
 */
let earlySignal: NodeJS.Signals | undefined;
let installed = false;

function remember(signal: NodeJS.Signals): void {
  earlySignal ??= signal;
}

export function captureEarlyStopSignals(): void {
  if (installed) return;
  installed = true;
  process.on("SIGTERM", remember);
  process.on("SIGINT", remember);
}

/** Removes the early listeners and returns the signal that arrived meanwhile, if any. */
export function takeEarlyStopSignal(): NodeJS.Signals | undefined {
  if (installed) {
    process.off("SIGTERM", remember);
    process.off("SIGINT", remember);
    installed = false;
  }
  const signal = earlySignal;
  earlySignal = undefined;
  return signal;
}
