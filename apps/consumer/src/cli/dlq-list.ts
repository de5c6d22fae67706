import type { Message } from "@aws-sdk/client-sqs";
import { EXIT_CONFIG, EXIT_CRASH, EXIT_OK, listenForStopRequests } from "@outbox/shared";
import { receiptOf } from "../message/receipt.js";
import { renderDeadLetters } from "./dead-letter-table.js";
import {
  type DeadLetter,
  deadLetterBatches,
  keptDeadLetter,
  releaseHeld,
  WalkOutlastedHoldError,
} from "./dead-letters.js";
import { type DlqQueues, openQueues } from "./open-queues.js";

/** What a walk of the DLQ found: what `keep` made of each message received (each once), all released again. */
export interface DeadLetterWalk<T> {
  /** What `keep` made of the first `keptAtMost` messages received. */
  readonly kept: readonly T[];
  /** Messages received (each once): those kept, and those past `keptAtMost`, counted only. */
  readonly received: number;
  /** Every message of the DLQ was received: the walk ended on an empty receive. */
  readonly complete: boolean;
}

/**
 * Every message in the DLQ, received once each and released at once at the end (visibility 0): the
 * walk takes nothing away, also when a receive fails half-way or `stopping` ends it early (not
 * complete then). A walk that outlasts its hold (DLQ_HOLD_SECONDS) sees its first messages again
 * and cannot tell what it missed: not complete either, with a line in `queues.log`. Of each batch it
 * keeps only what `keep` makes of a message (a capped description: keptDeadLetter) and the receipts
 * to release, never the messages, and keeps `keptAtMost` at most: its memory is the listing's, not
 * the bodies'. The one home of a
 * listing: `consumer dlq list` and the operator console call it.
 */
export async function walkDeadLetters<T>(
  queues: DlqQueues,
  stopping: AbortSignal,
  keep: (message: Message) => T,
  keptAtMost = Number.POSITIVE_INFINITY,
): Promise<DeadLetterWalk<T>> {
  const kept: T[] = [];
  let received = 0;
  const held: ReturnType<typeof receiptOf>[] = [];
  let complete = true;
  try {
    for await (const batch of deadLetterBatches(queues, stopping)) {
      for (const message of batch) {
        held.push(receiptOf(message));
        received += 1;
        if (kept.length < keptAtMost) kept.push(keep(message));
      }
    }
    if (stopping.aborted) complete = false;
  } catch (error) {
    if (error instanceof WalkOutlastedHoldError) {
      held.push(...error.again);
      queues.log.error({ err: error, listed: kept.length }, "dlq list: the list is partial");
    } else {
      queues.log.error({ err: error, listed: kept.length }, "dlq list: receive failed; the list is partial");
    }
    complete = false;
  }
  try {
    await releaseHeld(queues, held);
  } catch (error) {
    queues.log.warn(
      { err: error, held: held.length },
      "dlq list: release failed; the messages come back after their hold",
    );
  }
  return { kept, received, complete };
}

/**
 * `consumer dlq list [--json]`: walkDeadLetters, each message with its event, why it is there and its
 * attempts. A stop (SIGTERM, Ctrl-C), a failed receive or an outlasted hold: exit 1 (after the
 * release), the list partial, `complete: false` in the JSON.
 */
export async function runDlqList(options: { readonly json: boolean }): Promise<number> {
  const queues = openQueues("dlq list");
  if (!queues) return EXIT_CONFIG;
  // A stop (SIGTERM, Ctrl-C) ends the walk; what was received is released all the same.
  const stops = listenForStopRequests(queues.log, () => {});
  let walk: DeadLetterWalk<DeadLetter>;
  try {
    walk = await walkDeadLetters(queues, stops.stopping, (message) => keptDeadLetter(message));
  } finally {
    stops.dispose();
    queues.close();
  }
  const letters = walk.kept;
  process.stdout.write(
    options.json
      ? `${JSON.stringify({ total: letters.length, complete: walk.complete, messages: letters })}\n`
      : renderDeadLetters(letters),
  );
  return walk.complete ? EXIT_OK : EXIT_CRASH;
}
