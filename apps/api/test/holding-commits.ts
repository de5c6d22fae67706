/**
 * The photo service as `api run` starts it, each POST holding its transaction `argv[2]` ms before
 * the commit: how a drill or a test has requests in flight when it stops the service. Production
 * has no such setting; test-kit's `DaemonFleet.apiHoldingCommits` starts this entry.
 */
import { captureEarlyStopSignals } from "@outbox/shared/early-stop";

// As daemonCommand does: a stop that arrives while the service is still loading is not lost.
captureEarlyStopSignals();
const commitDelayMs = Number(process.argv[2]);
if (!Number.isInteger(commitDelayMs) || commitDelayMs < 0)
  throw new Error(
    `usage: holding-commits.ts HOLD_MS (a whole number of milliseconds), got ${process.argv[2]}`,
  );
const { runApiDaemon } = await import("../src/daemon.js");
await runApiDaemon({ commitDelayMs });
