import { performance } from "node:perf_hooks";
import { context, trace } from "@opentelemetry/api";
import { timedSignal } from "@outbox/shared";
import type { ClaimedRow } from "./claim-batch.js";
import type { RelayMetrics } from "./metrics.js";
import type { Chunk } from "./plan-chunks.js";
import { endPublishSpan, startPublishSpan } from "./publish-span.js";
import type { Publisher } from "./publisher.js";

export interface ChunkOutcome {
  readonly published: ClaimedRow[];
  readonly failed: {
    readonly row: ClaimedRow;
    readonly reason: string;
    readonly kind: "entry" | "request";
  }[];
  /** Cut off by the batch's signal (drain deadline or lease end): outcome unknown, not an attempt. */
  readonly abandoned: ClaimedRow[];
}

/**
 * Sends one chunk. `timeoutMs` bounds this request (all SDK retries included) and counts as a failed
 * attempt; `batchSignal` aborting means the relay must let go of the rows, which is not the rows' fault.
 */
export async function publishChunk(
  publisher: Publisher,
  chunk: Chunk,
  batchSignal: AbortSignal,
  timeoutMs: number,
  metrics: RelayMetrics,
): Promise<ChunkOutcome> {
  const call = timedSignal(timeoutMs, "PublishBatch", [batchSignal]);
  const started = performance.now();
  const span = startPublishSpan(chunk);
  metrics.requestsInFlight.inc();
  try {
    // Inside the span, so that spans of the HTTP call (if the SDK is instrumented) nest under it.
    const { failed } = await context.with(trace.setSpan(context.active(), span), () =>
      publisher.publishBatch({ topicArn: chunk.topicArn, entries: chunk.entries }, call.signal),
    );
    const reasons = new Map(failed.map((entry) => [entry.id, entry.reason]));
    const outcome: ChunkOutcome = { published: [], failed: [], abandoned: [] };
    for (const row of chunk.rows) {
      const reason = reasons.get(row.id);
      if (reason === undefined) outcome.published.push(row);
      else outcome.failed.push({ row, reason, kind: "entry" });
    }
    endPublishSpan(span, { refused: outcome.failed.length });
    return outcome;
  } catch (error) {
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    if (batchSignal.aborted) {
      endPublishSpan(span, { refused: 0, error: `abandoned: ${reason}` });
      return { published: [], failed: [], abandoned: chunk.rows };
    }
    endPublishSpan(span, { refused: 0, error: reason });
    return {
      published: [],
      failed: chunk.rows.map((row) => ({ row, reason, kind: "request" })),
      abandoned: [],
    };
  } finally {
    metrics.requestsInFlight.dec();
    metrics.publishSeconds.observe((performance.now() - started) / 1_000);
    call.dispose();
  }
}
