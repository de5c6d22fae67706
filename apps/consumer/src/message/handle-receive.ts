import { performance } from "node:perf_hooks";
import type { Message } from "@aws-sdk/client-sqs";
import { context } from "@opentelemetry/api";
import type { BatchHandler } from "@outbox/client";
import { echoed } from "../errors.js";
import { runBatchInboxTransaction } from "../inbox/batch-inbox-transaction.js";
import { TransactionEscapedError } from "../inbox/inbox-transaction.js";
import type { MessageResult } from "../metrics.js";
import {
  type MessageDeps,
  type MessageSettings,
  type PreparedMessage,
  prepareMessage,
  runPreparedMessage,
  settleFailed,
} from "./handle-message.js";
import { startProcessSpan } from "./process-span.js";

/**
 * The messages of one receive, those whose events share a batch handler in batches of up to its
 * `maxBatchSize`, the others one at a time. One promise per message, in order, resolving how that
 * message ended, as processMessage's does; each settles on its own (a slow message holds no other's).
 */
export function processReceived<DB>(
  settings: MessageSettings,
  deps: MessageDeps<DB>,
  messages: readonly Message[],
  leaseExpiresAt: number,
): Promise<MessageResult>[] {
  const preparing = messages.map((message) => prepareMessage(settings, deps, message, leaseExpiresAt));
  // Batches form once every message of the receive is prepared (a claim-checked payload is fetched
  // first). A preparation that crashed rejects its own message's promise, and the batched ones'.
  const batches = Promise.all(preparing).then((all) => runBatches(settings, deps, all.filter(isBatched)));
  batches.catch(() => {});
  return preparing.map(async (preparation) => {
    const prepared = await preparation;
    if (typeof prepared === "string") return prepared;
    if (!isBatched(prepared)) return runPreparedMessage(settings, deps, prepared);
    const outcome = (await batches).get(prepared);
    if (outcome === undefined) throw new Error("a message of a batch handler was left out of every batch");
    return outcome;
  });
}

type BatchedMessage<DB> = PreparedMessage<DB> & {
  readonly found: { readonly batch: BatchHandler<string, unknown, DB> };
};

function isBatched<DB>(prepared: PreparedMessage<DB> | MessageResult): prepared is BatchedMessage<DB> {
  return typeof prepared !== "string" && prepared.found.batch !== undefined;
}

/** Groups by handler (and type: a fallback batch handler takes several), chunks, runs the chunks. */
function runBatches<DB>(
  settings: MessageSettings,
  deps: MessageDeps<DB>,
  batched: readonly BatchedMessage<DB>[],
): Map<PreparedMessage<DB>, Promise<MessageResult>> {
  const groups = new Map<string, BatchedMessage<DB>[]>();
  for (const prepared of batched) {
    const group = groups.get(prepared.event.type);
    if (group === undefined) groups.set(prepared.event.type, [prepared]);
    else group.push(prepared);
  }
  const outcomes = new Map<PreparedMessage<DB>, Promise<MessageResult>>();
  for (const group of groups.values()) {
    const size = group[0]?.found.batch.maxBatchSize ?? 1;
    for (let start = 0; start < group.length; start += size) {
      const chunk = group.slice(start, start + size);
      const results = runBatch(settings, deps, chunk);
      chunk.forEach((prepared, index) => {
        outcomes.set(
          prepared,
          results.then((ended) => ended[index] ?? "failed"),
        );
      });
    }
  }
  return outcomes;
}

/**
 * One batch in one inbox transaction; if it fails for any reason, each of its messages is handled on
 * its own, so that one poison message is isolated and the others still commit exactly once.
 */
async function runBatch<DB>(
  settings: MessageSettings,
  deps: MessageDeps<DB>,
  chunk: readonly BatchedMessage<DB>[],
): Promise<MessageResult[]> {
  const [first] = chunk;
  if (first === undefined) return [];
  if (chunk.length === 1) return [await runPreparedMessage(settings, deps, first)];
  const deadline = chunk.reduce(
    (earliest, prepared) =>
      prepared.deadline.remainingMs() < earliest.remainingMs() ? prepared.deadline : earliest,
    first.deadline,
  );
  const started = performance.now();
  // A span per message, each continuing its own trace; the handler runs in none of them, since it
  // serves them all.
  const spans = chunk.map((prepared) =>
    startProcessSpan(prepared.event, settings.queueUrl, settings.consumer),
  );
  let processed: ReadonlySet<unknown>;
  try {
    processed = await runBatchInboxTransaction({
      pool: deps.pool,
      consumer: settings.consumer,
      events: chunk.map((prepared) => prepared.event),
      handler: first.found.batch,
      deadline,
      statementTimeoutMs: settings.statementTimeoutMs,
      log: () => deps.log.child({ eventType: echoed(first.event.type), batchSize: chunk.length }),
    });
  } catch (error) {
    for (const span of spans) {
      span.fail(error);
      span.end(undefined);
    }
    // Its inbox rows may be committed already (by the handler's own COMMIT): one message at a time
    // would then count each as a duplicate and delete it. Each is settled as the failure says.
    if (error instanceof TransactionEscapedError) {
      return Promise.all(chunk.map((prepared) => settleFailedBatched(deps, prepared, error, started)));
    }
    // Each message, on its own, would only find the database down again.
    if (await deps.database.explains(error)) {
      return Promise.all(chunk.map((prepared) => runPreparedMessage(settings, deps, prepared)));
    }
    deps.log.warn(
      { err: error, eventType: echoed(first.event.type), batchSize: chunk.length },
      "batch failed; handling its messages one at a time",
    );
    return Promise.all(chunk.map((prepared) => runPreparedMessage(settings, deps, prepared)));
  }
  const seconds = (performance.now() - started) / 1_000;
  return chunk.map((prepared, index) => {
    deps.heartbeat.untrack(prepared.lease);
    deps.settle.delete(prepared.lease);
    prepared.deadline.dispose();
    const result: MessageResult = processed.has(prepared.event) ? "processed" : "duplicate";
    spans[index]?.end(result);
    deps.counts.observeHandler(result, seconds);
    return result;
  });
}

/** One message of a batch whose transaction failed as a whole, settled as that failure says. */
async function settleFailedBatched<DB>(
  deps: MessageDeps<DB>,
  prepared: BatchedMessage<DB>,
  error: unknown,
  started: number,
): Promise<MessageResult> {
  deps.heartbeat.untrack(prepared.lease);
  prepared.deadline.dispose();
  const result = await settleFailed(deps, prepared.message, error, context.active());
  deps.counts.observeHandler(result, (performance.now() - started) / 1_000);
  return result;
}
