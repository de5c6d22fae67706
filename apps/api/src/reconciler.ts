import { type Periodic, startPeriodic } from "@outbox/shared";
import { type ReconcileOptions, type ReconcileSummary, reconcilePendingLinks } from "./reconcile-links.js";

/**
 * Runs the reconciliation job every `intervalMs` inside the service, the first time one interval
 * after the start. Each pass takes one batch; a full batch is followed by the next at once. Errors are logged and retried at the next interval.
 */
export function startReconciler(
  options: ReconcileOptions & {
    readonly intervalMs: number;
    readonly onPass?: (summary: ReconcileSummary) => void;
  },
): Periodic {
  return startPeriodic(
    async (stopped) => {
      for (;;) {
        if (stopped.aborted) return;
        const summary = await reconcilePendingLinks(options);
        options.onPass?.(summary);
        if (summary.attempted < options.batchSize) return;
      }
    },
    {
      intervalMs: options.intervalMs,
      runFirst: false,
      log: options.log,
      failureMessage: "gear link reconciliation failed; retrying at the next interval",
    },
  );
}
