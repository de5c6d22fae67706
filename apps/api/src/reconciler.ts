import { sleep } from "@outbox/shared";
import { type ReconcileOptions, type ReconcileSummary, reconcilePendingLinks } from "./reconcile-links.js";

export interface Reconciler {
  /** Stops after the pass in progress; resolves when no pass runs any more. */
  stop(): Promise<void>;
}

/**
 * Runs the reconciliation job every `intervalMs` inside the service. Each pass takes one batch; a
 * full batch is followed by the next at once. Errors are logged and retried at the next interval.
 */
export function startReconciler(
  options: ReconcileOptions & {
    readonly intervalMs: number;
    readonly onPass?: (summary: ReconcileSummary) => void;
  },
): Reconciler {
  const stopped = new AbortController();
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      await sleep(options.intervalMs, stopped.signal);
      try {
        for (;;) {
          if (stopped.signal.aborted) return;
          const summary = await reconcilePendingLinks(options);
          options.onPass?.(summary);
          if (summary.attempted < options.batchSize) break;
        }
      } catch (error) {
        options.log.warn({ err: error }, "gear link reconciliation failed; retrying at the next interval");
      }
    }
  })();
  return {
    async stop() {
      stopped.abort();
      await loop;
    },
  };
}
