import { type DaemonProcess, startDaemonProcess } from "@outbox/test-kit/process";

/** Starting on a busy 2-core machine can be slow; a daemon that never gets there fails the run. */
export const READY_TIMEOUT_MS = 120_000;

/**
 * One of our daemons (or a peer server) as a real process from its TypeScript entry, logging at
 * info. Its stderr goes straight to ours, so a long run shows trouble as it happens; Node's own
 * version warnings stay out of it. With `cpuProfDir`, V8 profiles the whole process (start-up and
 * stop included: read the request path's functions) into that directory when it exits, sampled every
 * 200 µs like the measured children: one file per thread, Node's names (the module loader's thread
 * writes one too).
 */
export function startBenchDaemon(
  entry: string,
  env: Record<string, string>,
  cpuProfDir?: string,
): DaemonProcess {
  const profile = cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${cpuProfDir}`, "--cpu-prof-interval=200"] : [];
  return startDaemonProcess(
    entry,
    { NODE_NO_WARNINGS: "1", LOG_LEVEL: "info", ...env },
    { nodeArgs: profile, stderr: "inherit" },
  );
}
