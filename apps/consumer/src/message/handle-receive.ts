import { performance } from "node:perf_hooks";
import type { Message } from "@aws-sdk/client-sqs";
import { context } from "@opentelemetry/api";
import type { BatchHandler } from "@outbox/client";
import { echoed } from "../errors.js";
import { runBatchInboxTransaction } from "../inbox/batch-inbox-transaction.js";
import { leftItsTransaction, type MessageFate } from "./fate.js";
import { type PreparedMessage, prepareMessage, runPrepared } from "./handle-message.js";
import type { MessageContext } from "./pipeline.js";
import { startProcessSpan } from "./process-span.js";

/**
 * The messages of one receive, those whose events share a batch handler in batches of up to its
 * `maxBatchSize`, the others one at a time. One promise per message, in order, resolving that
 * message's fate, as handleMessage's does; each ends on its own (a slow message holds no other's).
 */
export function handleReceive<DB>(
  ctx: MessageContext<DB>,
  messages: readonly Message[],
  leaseExpiresAt: number,
): Promise<MessageFate>[] {
  const preparing = messages.map((message) => prepareMessage(ctx, message, leaseExpiresAt));
  // Batches form once every message of the receive is prepared (a claim-checked payload is fetched
  // first). A preparation that crashed rejects its own message's promise, and the batched ones'.
  const batches = Promise.all(preparing).then((all) =>
    runBatches(
      ctx,
      all.flatMap((preparation) =>
        "prepared" in preparation && isBatched(preparation.prepared) ? [preparation.prepared] : [],
      ),
    ),
  );
  batches.catch(() => {});
  return preparing.map(async (preparing) => {
    const preparation = await preparing;
    if ("fate" in preparation) return preparation.fate;
    const { prepared } = preparation;
    if (!isBatched(prepared)) return runPrepared(ctx, prepared);
    const fate = (await batches).get(prepared);
    if (fate === undefined) throw new Error("a message of a batch handler was left out of every batch");
    return fate;
  });
}

type BatchedMessage<DB> = PreparedMessage<DB> & {
  readonly found: { readonly batch: BatchHandler<string, unknown, DB> };
};

function isBatched<DB>(prepared: PreparedMessage<DB>): prepared is BatchedMessage<DB> {
  return prepared.found.batch !== undefined;
}

/** Groups by handler (and type: a fallback batch handler takes several), chunks, runs the chunks. */
function runBatches<DB>(
  ctx: MessageContext<DB>,
  batched: readonly BatchedMessage<DB>[],
): Map<PreparedMessage<DB>, Promise<MessageFate>> {
  const groups = new Map<string, BatchedMessage<DB>[]>();
  for (const prepared of batched) {
    const group = groups.get(prepared.event.type);
    if (group === undefined) groups.set(prepared.event.type, [prepared]);
    else group.push(prepared);
  }
  const fates = new Map<PreparedMessage<DB>, Promise<MessageFate>>();
  for (const group of groups.values()) {
    const size = group[0]?.found.batch.maxBatchSize ?? 1;
    for (let start = 0; start < group.length; start += size) {
      const chunk = group.slice(start, start + size);
      const ended = runBatch(ctx, chunk);
      chunk.forEach((prepared, index) => {
        fates.set(
          prepared,
          ended.then((all) => {
            const fate = all[index];
            if (fate === undefined) throw new Error("a batch ended without a fate for one of its messages");
            return fate;
          }),
        );
      });
    }
  }
  return fates;
}

/**
 * One batch in one inbox transaction; if it fails for any reason, each of its messages is handled on
 * its own, so that one poison message is isolated and the others still commit exactly once.
 */
async function runBatch<DB>(
  ctx: MessageContext<DB>,
  chunk: readonly BatchedMessage<DB>[],
): Promise<MessageFate[]> {
  const [first] = chunk;
  if (first === undefined) return [];
  if (chunk.length === 1) return [await runPrepared(ctx, first)];
  const deadline = chunk.reduce(
    (earliest, prepared) =>
      prepared.deadline.remainingMs() < earliest.remainingMs() ? prepared.deadline : earliest,
    first.deadline,
  );
  const started = performance.now();
  // A span per message, each continuing its own trace; the handler runs in none of them, since it
  // serves them all.
  const spans = chunk.map((prepared) => startProcessSpan(prepared.event, ctx.queueUrl, ctx.consumer));
  let processed: ReadonlySet<unknown>;
  try {
    processed = await runBatchInboxTransaction({
      pool: ctx.pool,
      consumer: ctx.consumer,
      events: chunk.map((prepared) => prepared.event),
      handler: first.found.batch,
      deadline,
      statementTimeoutMs: ctx.statementTimeoutMs,
      log: () => ctx.log.child({ eventType: echoed(first.event.type), batchSize: chunk.length }),
    });
  } catch (error) {
    for (const span of spans) {
      span.fail(error);
      span.end(undefined);
    }
    // Its inbox rows may be committed already (by the handler's own COMMIT): one message at a time
    // would then count each as a duplicate and delete it. Each gets the fate the failure means.
    if (leftItsTransaction(error)) {
      return Promise.all(chunk.map((prepared) => failedInBatch(ctx, prepared, error, started)));
    }
    // A database outage explains it: each message, on its own, then finds the database down and is
    // released (runPrepared). Anything else is worth a line.
    if (!(await ctx.database.explains(error))) {
      ctx.log.warn(
        { err: error, eventType: echoed(first.event.type), batchSize: chunk.length },
        "batch failed; handling its messages one at a time",
      );
    }
    return Promise.all(chunk.map((prepared) => runPrepared(ctx, prepared)));
  }
  const seconds = (performance.now() - started) / 1_000;
  return chunk.map((prepared, index) => {
    ctx.heartbeat.untrack(prepared.lease);
    prepared.deadline.dispose();
    const fate: MessageFate = { result: processed.has(prepared.event) ? "processed" : "duplicate" };
    spans[index]?.end(fate.result);
    ctx.counts.observeHandler(fate.result, seconds);
    return fate;
  });
}

/** One message of a batch whose transaction failed as a whole: its fate as that failure says. */
async function failedInBatch<DB>(
  ctx: MessageContext<DB>,
  prepared: BatchedMessage<DB>,
  error: unknown,
  started: number,
): Promise<MessageFate> {
  ctx.heartbeat.untrack(prepared.lease);
  prepared.deadline.dispose();
  const fate = await ctx.fates.afterFailure(prepared.message, error, context.active());
  ctx.counts.observeHandler(fate.result, (performance.now() - started) / 1_000);
  return fate;
}
