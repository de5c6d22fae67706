import { performance } from "node:perf_hooks";
import {
  DeleteMessageBatchCommand,
  type Message,
  type MessageAttributeValue,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import { describeError, pointerUri } from "@outbox/client/internal";
import {
  EXIT_CONFIG,
  EXIT_CRASH,
  EXIT_OK,
  forTerminal,
  listenForStopRequests,
  objectExists,
} from "@outbox/shared";
import { type Receipt, receiptOf } from "../message/receipt.js";
import { POISON_REASON_ATTRIBUTE, POISON_RECEIVE_COUNT_ATTRIBUTE } from "../queue/dead-letter-queue.js";
import { deadLetterPointer } from "./dead-letter-pointer.js";
import {
  bounded,
  type DeadLetter,
  deadLetterBatches,
  describeDeadLetter,
  releaseHeld,
  shownDeadLetter,
  WalkOutlastedHoldError,
} from "./dead-letters.js";
import { type DlqQueues, openQueues } from "./open-queues.js";
import { matchesFilter, type RedriveFilter } from "./redrive-filter.js";

/** How often a long redrive says how far it got (a log line on stderr). */
const PROGRESS_EVERY_MS = 5_000;

/** The counts a redrive ends with: its summary on stdout, and its progress lines. */
export interface RedriveCounts {
  /** Received from the DLQ, each once. */
  received: number;
  /** Matched the filter: moved, failed, or (dry run) would be moved. */
  matched: number;
  /** Sent to the queue and deleted from the DLQ; with `undeleted`, sent but still in the DLQ too. */
  moved: number;
  /** Did not match the filter: released, left in the DLQ. */
  skipped: number;
  /** Matched, but the send (or S3, asked whether its object is there) failed: released, left in the DLQ for the next run. */
  failed: number;
  /**
   * Matched, but claim-checked and their object is gone: released, left in the DLQ. Sent back, they
   * would only come back as `claimed_payload_missing`; their payload is the producer's to send again.
   */
  objectGone: number;
  /** Moved, but their delete from the DLQ failed: a later redrive sends them again, the inbox drops the copy. */
  undeleted: number;
}

/** What the consumer added in the DLQ goes; the event's own attributes travel back as they came. */
function attributesToSend(message: Message): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    if (name === POISON_REASON_ATTRIBUTE || name === POISON_RECEIVE_COUNT_ATTRIBUTE) continue;
    attributes[name] =
      value.BinaryValue === undefined
        ? { DataType: value.DataType, StringValue: value.StringValue }
        : { DataType: value.DataType, BinaryValue: value.BinaryValue };
  }
  return attributes;
}

/**
 * One message back to the queue. A FIFO queue gets its group back (else the event's, else its own
 * id), and the DLQ MessageId as deduplication id: a second send of the same dead letter within SQS's
 * 5 minutes (a redrive killed between send and delete, run again) is dropped.
 */
async function sendBack(queues: DlqQueues, message: Message): Promise<void> {
  const fifo = queues.queueUrl.endsWith(".fifo");
  const letter = describeDeadLetter(message);
  await bounded(queues.callTimeoutMs, (signal) =>
    queues.sqs.send(
      new SendMessageCommand({
        QueueUrl: queues.queueUrl,
        MessageBody: message.Body,
        MessageAttributes: attributesToSend(message),
        MessageGroupId: fifo
          ? (message.Attributes?.MessageGroupId ?? letter.eventId ?? letter.messageId)
          : undefined,
        MessageDeduplicationId: fifo ? `redrive-${letter.messageId}` : undefined,
      }),
      { abortSignal: signal },
    ),
  );
}

/**
 * Deletes the sent messages from the DLQ; answers those SQS did not delete. A delete failing as a
 * whole leaves them all: they are in the queue already, so the run goes on (they come back to the
 * DLQ after their hold, and a later redrive's copy is a duplicate for the inbox).
 */
async function deleteFromDlq(queues: DlqQueues, sent: readonly Message[]): Promise<Message[]> {
  if (sent.length === 0) return [];
  try {
    const output = await bounded(queues.callTimeoutMs, (signal) =>
      queues.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queues.dlqUrl,
          Entries: sent.map((message, index) => ({
            Id: String(index),
            ReceiptHandle: message.ReceiptHandle,
          })),
        }),
        { abortSignal: signal },
      ),
    );
    const deleted = new Set((output.Successful ?? []).map((entry) => entry.Id));
    return sent.filter((_, index) => !deleted.has(String(index)));
  } catch (error) {
    queues.log.warn({ err: error, messages: sent.length }, "redrive: DeleteMessageBatch failed");
    return [...sent];
  }
}

/** The most characters of a message's text a redrive's warning shows (forTerminal). */
const SHOWN_CHARS = 1_000;

/**
 * The matched messages that may go back: a claim-checked one only while S3 still has its object
 * (HeadObject on the pointer's bucket and key, one SQS call's budget). Each redrive sends the
 * pointer with a fresh SQS timestamp, so repeated redrives can carry it past the bucket's
 * lifecycle, and a consumer built on AWS's SQS extended client deletes the object after processing.
 * One that is gone stays in the DLQ (`objectGone`); one S3 cannot answer for stays too, as `failed`:
 * an outage is not a missing object.
 */
async function withTheirObjects(
  queues: DlqQueues,
  matched: readonly Message[],
  counts: RedriveCounts,
  held: Receipt[],
): Promise<Message[]> {
  const pointers = matched.map(deadLetterPointer);
  const checks = await Promise.allSettled(
    pointers.map((pointer) =>
      pointer === undefined
        ? Promise.resolve(true)
        : bounded(queues.callTimeoutMs, (signal) => objectExists(queues.s3, pointer, signal)),
    ),
  );
  const going: Message[] = [];
  checks.forEach((check, index) => {
    const message = matched[index] as Message;
    const pointer = pointers[index];
    if ((check.status === "fulfilled" && check.value) || pointer === undefined) {
      going.push(message);
      return;
    }
    held.push(receiptOf(message));
    const { messageId, eventId } = shownDeadLetter(describeDeadLetter(message));
    const object = forTerminal(pointerUri(pointer), SHOWN_CHARS);
    if (check.status === "fulfilled") {
      counts.objectGone += 1;
      queues.log.warn(
        {
          messageId,
          eventId,
          reason: `its claim-checked object ${object} is gone (deleted, or expired): sent back, it would only come back as claimed_payload_missing`,
        },
        "redrive: not redriven; the message stays in the DLQ",
      );
      return;
    }
    counts.failed += 1;
    queues.log.warn(
      { messageId, eventId, object, err: describeError(check.reason) },
      "redrive: S3 did not say whether the message's object is there; the message stays in the DLQ",
    );
  });
  return going;
}

/**
 * The messages of one receive that match: each sent to the queue, then, once its send succeeded,
 * deleted from the DLQ. Never the other way round: a kill between the two leaves the message in
 * both queues (the inbox makes the second delivery a duplicate), never in neither.
 */
async function moveBatch(
  queues: DlqQueues,
  matched: readonly Message[],
  counts: RedriveCounts,
  held: Receipt[],
): Promise<void> {
  const outcomes = await Promise.allSettled(matched.map((message) => sendBack(queues, message)));
  const sent: Message[] = [];
  outcomes.forEach((outcome, index) => {
    const message = matched[index] as Message;
    if (outcome.status === "fulfilled") {
      sent.push(message);
      return;
    }
    counts.failed += 1;
    held.push(receiptOf(message));
    queues.log.warn(
      { messageId: message.MessageId, err: describeError(outcome.reason) },
      "redrive: send failed; the message stays in the DLQ",
    );
  });
  const undeleted = await deleteFromDlq(queues, sent);
  counts.moved += sent.length;
  counts.undeleted += undeleted.length;
  for (const message of undeleted) {
    queues.log.warn(
      { messageId: message.MessageId },
      "redrive: sent but not deleted from the DLQ; a later redrive sends it again, the inbox drops the duplicate",
    );
  }
}

export interface RedriveOptions {
  readonly filter: RedriveFilter;
  /** Print what would move (one JSON line each), move nothing. */
  readonly dryRun: boolean;
}

/** Receives the whole DLQ once, moving (or, dry, printing) what matches and holding the rest. */
async function redriveAll(
  queues: DlqQueues,
  options: RedriveOptions,
  counts: RedriveCounts,
  held: Receipt[],
  stopping: AbortSignal,
  wouldMove: (letter: DeadLetter) => void,
) {
  let reportedAt = performance.now();
  for await (const batch of deadLetterBatches(queues, stopping)) {
    counts.received += batch.length;
    const matched: Message[] = [];
    for (const message of batch) {
      const letter = describeDeadLetter(message);
      if (!matchesFilter(options.filter, letter)) {
        counts.skipped += 1;
        held.push(receiptOf(message));
        continue;
      }
      counts.matched += 1;
      if (options.dryRun) {
        held.push(receiptOf(message));
        wouldMove(letter);
      } else {
        matched.push(message);
      }
    }
    const going = matched.length > 0 ? await withTheirObjects(queues, matched, counts, held) : [];
    if (going.length > 0) await moveBatch(queues, going, counts, held);
    if (performance.now() - reportedAt >= PROGRESS_EVERY_MS) {
      reportedAt = performance.now();
      queues.log.info({ ...counts, dryRun: options.dryRun }, "redrive progress");
    }
  }
}

/** How a redrive ended: its counts, whether it was a dry run, and whether the whole DLQ was walked. */
export interface RedriveSummary extends RedriveCounts {
  readonly dryRun: boolean;
  /** The whole DLQ was walked (a stop, a failure or an outlasted hold leave it false). */
  readonly complete: boolean;
}

/**
 * Moves the DLQ's messages (all, or those the filter matches) back to the consumer's queue; a dry
 * run hands each match to `wouldMove` instead. What it received and did not move is released at
 * once at the end. A claim-checked message whose object is gone is not sent back (withTheirObjects).
 * `stopping` ends it after the batch in hand, which is moved whole. The one home of a redrive:
 * `consumer redrive` and the operator console call it.
 */
export async function redrive(
  queues: DlqQueues,
  options: RedriveOptions,
  stopping: AbortSignal,
  wouldMove: (letter: DeadLetter) => void = () => {},
): Promise<RedriveSummary> {
  const counts: RedriveCounts = {
    received: 0,
    matched: 0,
    moved: 0,
    skipped: 0,
    failed: 0,
    objectGone: 0,
    undeleted: 0,
  };
  const held: Receipt[] = [];
  let cut = false;
  try {
    await redriveAll(queues, options, counts, held, stopping, wouldMove);
    if (stopping.aborted) {
      cut = true;
      queues.log.warn(counts, "redrive: stopped early; what is left stays in the DLQ");
    }
  } catch (error) {
    cut = true;
    if (error instanceof WalkOutlastedHoldError) {
      held.push(...error.again);
      queues.log.error({ err: error, ...counts }, "redrive: stopped, the DLQ was not covered");
    } else {
      queues.log.error(
        { err: error, ...counts },
        "redrive: SQS failed; stopped, what is left stays in the DLQ",
      );
    }
  }
  try {
    await releaseHeld(queues, held);
  } catch (error) {
    queues.log.warn(
      { err: error, held: held.length },
      "redrive: release failed; the messages come back after their hold",
    );
  }
  return { ...counts, dryRun: options.dryRun, complete: !cut };
}

/**
 * `consumer redrive [filters] [--dry-run]`: redrive, each dry-run match printed as a JSON line. Prints
 * `{"matched":N,"moved":N,"skipped":N,"failed":N,"objectGone":N,…,"complete":B}`; exit 1 when a
 * send failed, SQS failed as a whole, a stop (SIGTERM, Ctrl-C) cut it short (after the release), the
 * walk outlasted its hold (not complete), or `--id` matched nothing.
 */
export async function runRedrive(options: RedriveOptions): Promise<number> {
  const queues = openQueues("redrive");
  if (!queues) return EXIT_CONFIG;
  const stops = listenForStopRequests(queues.log, () => {});
  let summary: RedriveSummary;
  try {
    summary = await redrive(queues, options, stops.stopping, (letter) => {
      process.stdout.write(`${JSON.stringify({ wouldMove: shownDeadLetter(letter) })}\n`);
    });
  } finally {
    stops.dispose();
    queues.close();
  }
  queues.log.info(summary, "redrive done");
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  const idMissed = options.filter.ids !== undefined && summary.matched === 0;
  return !summary.complete || summary.failed > 0 || idMissed ? EXIT_CRASH : EXIT_OK;
}
