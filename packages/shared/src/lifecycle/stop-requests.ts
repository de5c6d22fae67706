import type { Logger } from "../log/logger.js";
import { takeEarlyStopSignal } from "./early-stop.js";
import { EXIT_FORCED } from "./exit-codes.js";

export interface StopRequests {
  /** Aborts at the first SIGTERM or SIGINT: stop taking new work. */
  readonly stopping: AbortSignal;
  /** Resolves with the signal that asked for the stop. */
  readonly requested: Promise<NodeJS.Signals>;
  dispose(): void;
}

/**
 * The only place that listens to process signals. The first SIGTERM/SIGINT starts a graceful stop.
 * A second SIGTERM is ignored: the platform's SIGKILL, not a repeated TERM, is the hard stop, and
 * giving up early would manufacture the redeliveries we drain to avoid. A second SIGINT is a person
 * pressing Ctrl-C twice: `onForcedExit` runs and the process exits 130 at once.
 */
export function listenForStopRequests(log: Logger, onForcedExit: () => void): StopRequests {
  const controller = new AbortController();
  let resolveRequested: (signal: NodeJS.Signals) => void = () => {};
  const requested = new Promise<NodeJS.Signals>((resolve) => {
    resolveRequested = resolve;
  });
  const onSignal = (signal: NodeJS.Signals) => {
    if (!controller.signal.aborted) {
      log.info({ signal }, "stop requested");
      controller.abort(new Error(`stop requested by ${signal}`));
      resolveRequested(signal);
      return;
    }
    if (signal === "SIGINT") {
      onForcedExit();
      process.exit(EXIT_FORCED);
    }
    log.warn({ signal }, "already stopping; signal ignored");
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  const early = takeEarlyStopSignal();
  if (early) onSignal(early);
  return {
    stopping: controller.signal,
    requested,
    dispose() {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
    },
  };
}
