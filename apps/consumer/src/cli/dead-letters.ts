import { type Message, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { Deadline, EVENT_ID_ATTRIBUTE, EVENT_TYPE_ATTRIBUTE } from "@outbox/client";
import { MAX_BATCH_ENTRIES } from "@outbox/client/internal";
import { forTerminal, untilAborted } from "@outbox/shared";
import { systemAttributes } from "../loop/pollers.js";
import { type Receipt, receiptOf, receiveCountOf } from "../message/receipt.js";
import { POISON_REASON_ATTRIBUTE, POISON_RECEIVE_COUNT_ATTRIBUTE } from "../queue/dead-letter-queue.js";
import { releaseMessages } from "../queue/release.js";
import type { DlqQueues } from "./open-queues.js";

/**
 * A receive's long-poll wait: short, but not 0 (a short poll samples some of SQS's servers and may
 * answer "empty" while messages are there; a long poll asks them all), so an empty answer ends the walk.
 */
const RECEIVE_WAIT_SECONDS = 1;

/** One message of the DLQ as `consumer dlq list` shows it and `consumer redrive` filters it. */
export interface DeadLetter {
  /** The DLQ's MessageId (a poison message's copy has a new one). */
  readonly messageId: string;
  readonly eventId: string | null;
  readonly eventType: string | null;
  /** Why: the consumer's `poison_reason`; null when the queue's redrive policy moved it (its handler kept failing). */
  readonly reason: string | null;
  /**
   * Deliveries before it landed here: `poison_receive_count` for a poison message (its copy starts a
   * count of its own); else the ApproximateReceiveCount SQS kept, less this command's own receive.
   */
  readonly attempts: number;
  /** SentTimestamp: when the consumer quarantined it, or, moved by the redrive policy, when it was first sent. */
  readonly sentAt: string | null;
  readonly ageSeconds: number | null;
}

/** The SDK call `call`, cut when `timeoutMs` runs out: the signal aborts the request in flight, retries included. */
export async function bounded<T>(timeoutMs: number, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const deadline = Deadline.after(timeoutMs);
  try {
    return await untilAborted(call(deadline.signal), deadline);
  } finally {
    deadline.dispose();
  }
}

// What a listing shows and a redrive needs: the count, the age, a FIFO message's group.
const SYSTEM_ATTRIBUTES = systemAttributes(["ApproximateReceiveCount", "SentTimestamp", "MessageGroupId"]);

async function receiveBatch(queues: DlqQueues): Promise<Message[]> {
  const { Messages = [] } = await bounded(queues.callTimeoutMs + RECEIVE_WAIT_SECONDS * 1_000, (signal) =>
    queues.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queues.dlqUrl,
        MaxNumberOfMessages: MAX_BATCH_ENTRIES,
        WaitTimeSeconds: RECEIVE_WAIT_SECONDS,
        VisibilityTimeout: queues.holdSeconds,
        MessageAttributeNames: ["All"],
        ...SYSTEM_ATTRIBUTES,
      }),
      { abortSignal: signal, requestTimeout: queues.requestTimeoutMs + RECEIVE_WAIT_SECONDS * 1_000 },
    ),
  );
  return Messages;
}

/**
 * The walk lasted longer than the hold: messages it received first are visible again, and it can no
 * longer tell when it has seen them all. `again` are their new receipts, for the caller to release.
 */
export class WalkOutlastedHoldError extends Error {
  override readonly name = "WalkOutlastedHoldError";

  constructor(
    readonly again: readonly Receipt[],
    seen: number,
    holdSeconds: number,
  ) {
    super(
      `after ${seen} messages the walk outlasted its ${holdSeconds} s hold: the first ones came back, so the DLQ was not covered; run it again (what this run moved is gone from the DLQ)`,
    );
  }
}

/**
 * Every message in the DLQ, 10 at a time, each received once: each is held (invisible for the
 * queues' hold) until the caller deletes or releases it. Ends when a receive finds nothing: the DLQ
 * is empty of messages not held; or when `stopping` aborts. A message received a second time means
 * its hold ran out before the walk ended (a DLQ too large to walk within it): the walk cannot know
 * what it missed, and throws WalkOutlastedHoldError after yielding what was new, instead of ending
 * as if it were complete.
 */
export async function* deadLetterBatches(
  queues: DlqQueues,
  stopping: AbortSignal,
): AsyncGenerator<Message[]> {
  const seen = new Set<string>();
  // A stop (SIGTERM, Ctrl-C) ends the walk before the next receive: the caller then releases what it holds.
  while (!stopping.aborted) {
    const batch = await receiveBatch(queues);
    if (batch.length === 0) return;
    const fresh: Message[] = [];
    const again: Message[] = [];
    for (const message of batch) {
      const id = message.MessageId ?? "";
      (seen.has(id) ? again : fresh).push(message);
      seen.add(id);
    }
    if (fresh.length > 0) yield fresh;
    if (again.length > 0)
      throw new WalkOutlastedHoldError(again.map(receiptOf), seen.size, queues.holdSeconds);
  }
}

function attribute(message: Message, name: string): string | null {
  return message.MessageAttributes?.[name]?.StringValue ?? null;
}

/** What the DLQ message says of itself, read as `consumer dlq list` shows it. */
export function describeDeadLetter(message: Message, now = Date.now()): DeadLetter {
  const sent = Number(message.Attributes?.SentTimestamp ?? Number.NaN);
  const poisonCount = attribute(message, POISON_RECEIVE_COUNT_ATTRIBUTE);
  return {
    messageId: message.MessageId ?? "",
    eventId: attribute(message, EVENT_ID_ATTRIBUTE),
    eventType: attribute(message, EVENT_TYPE_ATTRIBUTE),
    reason: attribute(message, POISON_REASON_ATTRIBUTE),
    attempts: poisonCount === null ? Math.max(0, receiveCountOf(message) - 1) : Number(poisonCount),
    sentAt: Number.isFinite(sent) ? new Date(sent).toISOString() : null,
    ageSeconds: Number.isFinite(sent) ? Math.max(0, Math.round((now - sent) / 1_000)) : null,
  };
}

/** The most characters of one of a dead letter's texts that `--json` and a dry run's lines show. */
const SHOWN_CHARS = 1_000;

/**
 * The first `maxChars` characters of `text` (all of them by default), as a string of its own. V8 makes a slice of a long
 * string a view that keeps the whole string alive: a preview sliced from a 256 KiB body would hold
 * the body. The JSON round trip builds a new string (lossless: lone surrogates too).
 */
export function keptText(text: string, maxChars = text.length): string {
  // Not between the halves of a surrogate pair.
  const lastCode = text.charCodeAt(maxChars - 1);
  const end = lastCode >= 0xd800 && lastCode <= 0xdbff ? maxChars - 1 : maxChars;
  return JSON.parse(JSON.stringify(text.slice(0, end))) as string;
}

/**
 * A dead letter as an operator is shown it: its texts come from the message, so each is escaped and
 * capped (forTerminal). What is moved is the message itself, untouched.
 */
export function shownDeadLetter(letter: DeadLetter): DeadLetter {
  const shown = (text: string | null) => (text === null ? null : forTerminal(text, SHOWN_CHARS));
  return {
    ...letter,
    messageId: forTerminal(letter.messageId, SHOWN_CHARS),
    eventId: shown(letter.eventId),
    eventType: shown(letter.eventType),
    reason: shown(letter.reason),
  };
}

/**
 * A dead letter as `--json` shows it (shownDeadLetter: escaped, each text capped at SHOWN_CHARS with
 * its full length said), for a listing that keeps it past its batch: each text copied (keptText), so
 * a kept letter holds a few thousand characters at most whatever its message carries, and nothing
 * of the message itself.
 */
export function keptDeadLetter(message: Message, now = Date.now()): DeadLetter {
  const letter = shownDeadLetter(describeDeadLetter(message, now));
  const kept = (text: string | null) => (text === null ? null : keptText(text));
  return {
    ...letter,
    messageId: keptText(letter.messageId),
    eventId: kept(letter.eventId),
    eventType: kept(letter.eventType),
    reason: kept(letter.reason),
    sentAt: kept(letter.sentAt),
  };
}

/**
 * Hands held messages back at once (visibility 0): a listing or a filter must not hide what it did
 * not move. Bounded: one SQS call's budget per 10 messages.
 */
export async function releaseHeld(queues: DlqQueues, held: readonly Receipt[]): Promise<number> {
  if (held.length === 0) return 0;
  const calls = Math.ceil(held.length / MAX_BATCH_ENTRIES);
  return bounded(queues.callTimeoutMs * calls, () => releaseMessages(queues.sqs, queues.dlqUrl, held, 0));
}
