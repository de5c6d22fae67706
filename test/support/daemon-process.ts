import { type DaemonProcess, startDaemonProcess as startNamed } from "@outbox/drills";

export type { DaemonProcess, LogLine } from "@outbox/drills";
export { apiEnv, apiPort, DaemonFleet, waitUntil } from "@outbox/drills";

/** A daemon as a real OS process, named after its entry point (see @outbox/drills). */
export function startDaemonProcess(
  entry: string,
  env: Record<string, string>,
  args: string[] = [],
): DaemonProcess {
  return startNamed(entry, entry, env, args);
}
