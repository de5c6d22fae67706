import { describe, expect, it } from "vitest";
import type { ClaimedBatch } from "../src/batch.js";
import { failureWaitMs, type LoopSteps, runLoop } from "../src/loop.js";
import type { ClaimedRow } from "../src/outbox-store.js";

// The loop's own rules, on steps that stand in for the database and the bus: what runs when is
// decided here, so each rule is checked exactly rather than caught by timing.

const BATCH_SIZE = 2;

function batchOf(size: number, label: string): ClaimedBatch {
  const rows = Array.from(
    { length: size },
    (_, i): ClaimedRow => ({
      id: `${label}-${i}`,
      seq: String(i + 1),
      topic: "orders",
      orderingKey: null,
      eventType: "test.happened",
      payload: "{}",
      headers: {},
      attempts: 0,
      createdAt: new Date(0),
    }),
  );
  return { rows, claimedAt: 0 };
}

const labelOf = (batch: ClaimedBatch) => batch.rows[0]?.id.split("-")[0];

/** A promise and the function that settles it. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/**
 * Stages that claim the sizes in `sizes` (labelled b1, b2, …), then stop the pipeline. Each claim
 * records how many rows were held when it was sent (0: the batch before it was done).
 */
function scriptedStages(sizes: readonly number[], stopping: AbortController) {
  const log = {
    leasedAtClaim: [] as number[],
    processed: [] as string[],
    released: [] as string[],
    failures: [] as unknown[],
  };
  let claims = 0;
  let leasedRows = () => 0;
  const stages: LoopSteps = {
    async claim() {
      log.leasedAtClaim.push(leasedRows());
      const size = sizes[claims];
      claims += 1;
      if (size === undefined) {
        stopping.abort();
        return batchOf(0, "none");
      }
      return batchOf(size, `b${claims}`);
    },
    async publish(batch) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      log.processed.push(labelOf(batch) ?? "");
    },
    async release(batch) {
      log.released.push(labelOf(batch) ?? "");
    },
    async wait() {},
    failed(error) {
      log.failures.push(error);
    },
    recovered() {},
  };
  return {
    log,
    stages,
    watch(pipeline: { leasedRows(): number }) {
      leasedRows = () => pipeline.leasedRows();
    },
  };
}

describe("runLoop", () => {
  it("claims ahead while a batch publishes, and at depth 1 only once it is done", async () => {
    for (const [depth, expected] of [
      [1, [0, 0, 0, 0]],
      [2, [0, 2, 2, 2]],
    ] as const) {
      const stopping = new AbortController();
      const script = scriptedStages([2, 2, 2], stopping);
      const pipeline = runLoop(
        { pipelineDepth: depth, batchSize: BATCH_SIZE, pollIntervalMs: 10 },
        script.stages,
        stopping.signal,
      );
      script.watch(pipeline);
      await pipeline.done;
      expect(script.log.leasedAtClaim).toEqual(expected);
      // Batches publish one after the other, in claim order.
      expect(script.log.processed).toEqual(["b1", "b2", "b3"]);
    }
  });

  it("starts the next batch once the one before has handed all its rows over, not before, and not only once it is done", async () => {
    const stopping = new AbortController();
    const b1HandsOver = gate();
    const b1Ends = gate();
    const events: string[] = [];
    let claims = 0;
    const pipeline = runLoop(
      { pipelineDepth: 2, batchSize: BATCH_SIZE, pollIntervalMs: 10 },
      {
        async claim() {
          claims += 1;
          if (claims > 2) {
            stopping.abort();
            return batchOf(0, "none");
          }
          return batchOf(2, `b${claims}`);
        },
        async publish(batch, handedOver) {
          const label = labelOf(batch) ?? "";
          events.push(`${label} starts`);
          if (label === "b1") {
            await b1HandsOver.opened;
            handedOver();
            await b1Ends.opened;
          }
          events.push(`${label} done`);
        },
        async release(batch) {
          events.push(`${labelOf(batch)} released`);
        },
        async wait() {},
        failed() {},
        recovered() {},
      },
      stopping.signal,
    );
    // b2 is claimed ahead while b1 still has rows to send: it waits.
    await expect.poll(() => claims).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(events).toEqual(["b1 starts"]);
    // b1's last requests are out (their answers and marks pending): b2 takes the lanes beside them.
    b1HandsOver.open();
    await expect.poll(() => events).toEqual(["b1 starts", "b2 starts", "b2 done"]);
    b1Ends.open();
    await pipeline.done;
    expect(events).toEqual(["b1 starts", "b2 starts", "b2 done", "b1 done"]);
  });

  it("on stop, releases the batch claimed ahead instead of starting it, and finishes the one in flight", async () => {
    const stopping = new AbortController();
    const first = gate();
    const claimedAhead = gate();
    const processed: string[] = [];
    const released: string[] = [];
    let claims = 0;
    const pipeline = runLoop(
      { pipelineDepth: 2, batchSize: BATCH_SIZE, pollIntervalMs: 10 },
      {
        async claim() {
          claims += 1;
          if (claims === 2) claimedAhead.open();
          return batchOf(2, `b${claims}`);
        },
        async publish(batch) {
          await first.opened;
          processed.push(labelOf(batch) ?? "");
        },
        async release(batch) {
          released.push(labelOf(batch) ?? "");
        },
        async wait() {},
        failed() {},
        recovered() {},
      },
      stopping.signal,
    );
    await claimedAhead.opened;
    // The claim ahead has returned once a timer has run: both batches are held.
    await new Promise((resolve) => setTimeout(resolve, 1));
    expect(pipeline.leasedRows()).toBe(4);
    stopping.abort();
    await new Promise((resolve) => setTimeout(resolve, 1));
    // Released at the stop, while b1 is still publishing: not after it.
    expect(released).toEqual(["b2"]);
    expect(processed).toEqual([]);
    first.open();
    await pipeline.done;
    expect(processed).toEqual(["b1"]);
    expect(released).toEqual(["b2"]);
    expect(pipeline.leasedRows()).toBe(0);
  });

  it("after a failed batch, releases the batch claimed before the failure and backs off before claiming again", async () => {
    const stopping = new AbortController();
    const processed: string[] = [];
    const released: string[] = [];
    const failures: unknown[] = [];
    const recoveries: number[] = [];
    const claimTimes: number[] = [];
    const pipeline = runLoop(
      { pipelineDepth: 2, batchSize: BATCH_SIZE, pollIntervalMs: 50 },
      {
        async claim() {
          claimTimes.push(performance.now());
          if (claimTimes.length > 4) stopping.abort();
          return batchOf(2, `b${claimTimes.length}`);
        },
        async publish(batch) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          if (labelOf(batch) === "b1") throw new Error("mark failed");
          processed.push(labelOf(batch) ?? "");
        },
        async release(batch) {
          released.push(labelOf(batch) ?? "");
        },
        async wait() {},
        failed(error, consecutiveErrors) {
          failures.push([(error as Error).message, consecutiveErrors]);
        },
        recovered(failedInARow) {
          recoveries.push(failedInARow);
        },
      },
      stopping.signal,
    );
    await pipeline.done;
    expect(failures).toEqual([["mark failed", 1]]);
    // The first batch that worked after it ended the streak of one.
    expect(recoveries).toEqual([1]);
    // b2 was claimed while b1 ran, before b1 failed: it sends nothing.
    expect(released).toContain("b2");
    expect(processed).not.toContain("b2");
    expect(processed).toContain("b3");
    // The claim after the failure waited for the backoff (half of 50 ms at least, with jitter).
    expect((claimTimes[2] ?? 0) - (claimTimes[1] ?? 0)).toBeGreaterThanOrEqual(20);
  });

  it("pauses claiming ahead for 1, 2, 4 … batches after claims ahead that came back short", async () => {
    const stopping = new AbortController();
    // Full, then short while b1 is in flight; the pattern of claims that follows shows the pauses.
    const script = scriptedStages([2, 0, 2, 0, 2, 2, 2, 2], stopping);
    const pipeline = runLoop(
      { pipelineDepth: 2, batchSize: BATCH_SIZE, pollIntervalMs: 10 },
      script.stages,
      stopping.signal,
    );
    script.watch(pipeline);
    await pipeline.done;
    expect(script.log.leasedAtClaim).toEqual([
      0, // b1
      2, // ahead: short → pause 1 batch
      0, // b3, one by one
      2, // ahead again: short → pause 2 batches
      0, // b5
      0, // b6
      2, // b7 ahead again, full: the pause ends
      2, // b8 ahead
      2, // the last claim (stops the pipeline), ahead
    ]);
    expect(script.log.processed).toEqual(["b1", "b3", "b5", "b6", "b7", "b8"]);
  });
});

describe("the wait after failures", () => {
  const POLL_MS = 1_000;
  /** What pg throws when Postgres goes away under a query, and when nothing listens any more. */
  const lostConnections = [
    new Error("Connection terminated unexpectedly"),
    Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
  ];

  it("stays within a second after a lost database connection, however long the outage, so a failover is noticed at once", () => {
    for (const error of lostConnections)
      for (const failures of [1, 5, 20, 200])
        expect(failureWaitMs(failures, error, POLL_MS)).toBeLessThanOrEqual(1_000);
  });

  it("doubles up to 30 s for other failures (a bus that refuses), where retrying sooner only adds load", () => {
    const refused = new Error("publish failed: throttled");
    expect(failureWaitMs(1, refused, POLL_MS)).toBeLessThanOrEqual(1_000);
    // Jittered between half and all of 30 s once the doubling has reached it.
    expect(failureWaitMs(20, refused, POLL_MS)).toBeGreaterThanOrEqual(15_000);
    expect(failureWaitMs(20, refused, POLL_MS)).toBeLessThanOrEqual(30_000);
  });
});
