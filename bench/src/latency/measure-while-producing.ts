import { type JobResult, MeasuredChild } from "../child.js";
import type { RelayJob } from "../jobs.js";

/** Time the child's relay gets to LISTEN and settle before the first commit. */
const SETTLE_MS = 300;

/** Starts the relay child, runs `produce` once the relay has settled, and returns what the child measured. */
export async function measureWhileProducing(
  job: RelayJob,
  produce: () => Promise<unknown>,
): Promise<JobResult> {
  const child = new MeasuredChild(job);
  try {
    await child.ready;
    child.go();
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    await produce();
    return await child.result;
  } finally {
    child.kill("SIGKILL");
  }
}
