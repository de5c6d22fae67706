import { EXIT_CONFIG, EXIT_CRASH, EXIT_OK, listenForStopRequests } from "@outbox/shared";
import { receiptOf } from "../receipt.js";
import { renderDeadLetters } from "./dead-letter-table.js";
import {
  type DeadLetter,
  deadLetterBatches,
  describeDeadLetter,
  releaseHeld,
  shownDeadLetter,
  WalkOutlastedHoldError,
} from "./dead-letters.js";
import { openQueues } from "./open-queues.js";

/**
 * `consumer dlq list [--json]`: every message in the DLQ with its event, why it is there and its
 * attempts. It consumes nothing: what it received it releases at once at the end (visibility 0),
 * also when a receive fails half-way or a stop (SIGTERM, Ctrl-C) ends it early (exit 1 then, after
 * the release, the list partial). A walk that outlasts its hold (DLQ_HOLD_SECONDS) sees its first
 * messages again and cannot tell what it missed: exit 1 too, `complete: false` in the JSON, a line on stderr.
 */
export async function runDlqList(options: { readonly json: boolean }): Promise<number> {
  const queues = openQueues("dlq list");
  if (!queues) return EXIT_CONFIG;
  const letters: DeadLetter[] = [];
  const held: ReturnType<typeof receiptOf>[] = [];
  let code = EXIT_OK;
  // A stop (SIGTERM, Ctrl-C) ends the walk; what was received is released below all the same.
  const stops = listenForStopRequests(queues.log, () => {});
  try {
    for await (const batch of deadLetterBatches(queues, stops.stopping)) {
      for (const message of batch) {
        held.push(receiptOf(message));
        letters.push(describeDeadLetter(message));
      }
    }
    if (stops.stopping.aborted) code = EXIT_CRASH;
  } catch (error) {
    if (error instanceof WalkOutlastedHoldError) {
      held.push(...error.again);
      queues.log.error({ err: error, listed: letters.length }, "dlq list: the list is partial");
    } else {
      queues.log.error(
        { err: error, listed: letters.length },
        "dlq list: receive failed; the list is partial",
      );
    }
    code = EXIT_CRASH;
  }
  try {
    await releaseHeld(queues, held);
  } catch (error) {
    queues.log.warn(
      { err: error, held: held.length },
      "dlq list: release failed; the messages come back after their hold",
    );
  } finally {
    stops.dispose();
    queues.close();
  }
  // `complete`: every message of the DLQ is in the list (the walk ended on an empty receive).
  process.stdout.write(
    options.json
      ? `${JSON.stringify({ total: letters.length, complete: code === EXIT_OK, messages: letters.map(shownDeadLetter) })}\n`
      : renderDeadLetters(letters),
  );
  return code;
}
