import type { Message } from "@aws-sdk/client-sqs";
import {
  type DeadLetter,
  type DlqQueues,
  describeDeadLetter,
  keptText,
  matchesFilter,
  type RedriveSummary,
  redrive,
  walkDeadLetters,
} from "@outbox/consumer/operations";
import { deadLetterKind } from "./reason-kind.js";

/** A dead letter as the console lists it: what `consumer dlq list` shows, its kind, attributes and body. */
export interface ListedLetter extends DeadLetter {
  readonly kind: string;
  /** Its message attributes (string and number ones), each name and value capped at ATTRIBUTE_KEPT. */
  readonly attributes: Readonly<Record<string, string>>;
  /** The body's first BODY_HEAD characters, copied (keptText); `bodyChars` is its whole length. */
  readonly bodyHead: string;
  readonly bodyChars: number;
}

export interface DeadLetterListing {
  /** The first LETTERS_KEPT letters the walk received. */
  readonly letters: readonly ListedLetter[];
  /** Messages the walk received: `letters` and those past LETTERS_KEPT, counted only. */
  readonly received: number;
  /** Every message of the DLQ is listed (the walk ended on an empty receive). */
  readonly complete: boolean;
  /** When the walk ended (ISO). */
  readonly readAt: string;
}

/** Which dead letters a list or a redrive takes: every field absent, all of them. */
export interface DeadLetterFilter {
  readonly eventType?: string;
  readonly kind?: string;
  readonly olderThanSeconds?: number;
}

/** The most characters of a body kept from a walk: what the page shows (PAYLOAD_SHOWN). */
const BODY_HEAD = 1_000;
/** The most characters of an id, a type or a reason kept: what the page shows at most (REASON_DETAIL). */
const TEXT_KEPT = 1_000;
/** The most characters of an attribute's name or value kept (the page shows fewer). */
const ATTRIBUTE_KEPT = 200;
/**
 * The most letters a listing keeps. With each letter capped (at most some 6 000 characters, whatever
 * its body: BODY_HEAD, ATTRIBUTE_KEPT, TEXT_KEPT), the listing's memory is bounded whatever the
 * DLQ holds; past it the walk counts messages without keeping them.
 */
export const LETTERS_KEPT = 10_000;
/**
 * How long a walk's listing is shown before the next page view walks again. A walk receives every
 * message of the DLQ (1 000 receives for 10 000 messages), so live refreshes show SQS's counts
 * (GetQueueAttributes) and the listing is read again at most this often, or when asked.
 */
export const LISTING_FRESH_MS = 30_000;

/** What a listing keeps of a message: capped copies of its texts, never the message (keptText). */
function listed(message: Message): ListedLetter {
  const described = describeDeadLetter(message);
  const kept = (text: string | null) => (text === null ? null : keptText(text, TEXT_KEPT));
  const letter = {
    ...described,
    messageId: keptText(described.messageId, TEXT_KEPT),
    eventId: kept(described.eventId),
    eventType: kept(described.eventType),
    reason: kept(described.reason),
  };
  const attributes: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    if (value.StringValue !== undefined)
      attributes[keptText(name, ATTRIBUTE_KEPT)] = keptText(value.StringValue, ATTRIBUTE_KEPT);
  }
  const body = message.Body ?? "";
  return {
    ...letter,
    kind: deadLetterKind(letter.reason),
    attributes,
    bodyHead: keptText(body, BODY_HEAD),
    bodyChars: body.length,
  };
}

/** Whether `letter` is one `filter` takes: its kind, then what `consumer redrive` filters on (matchesFilter). */
export function matchesLetter(filter: DeadLetterFilter, letter: ListedLetter): boolean {
  if (filter.kind !== undefined && letter.kind !== filter.kind) return false;
  const olderThanMs = filter.olderThanSeconds === undefined ? undefined : filter.olderThanSeconds * 1_000;
  return matchesFilter({ eventType: filter.eventType, olderThanMs }, letter);
}

/**
 * The console's one door to the DLQ. A walk holds every message it receives until its end, so two
 * walks at once, or a walk beside a redrive, would each miss what the other holds: the desk runs
 * them one at a time, and keeps the last listing for LISTING_FRESH_MS.
 */
export class DeadLetterDesk {
  #turn: Promise<unknown> = Promise.resolve();
  #listing: DeadLetterListing | undefined;
  #listedAt = 0;

  constructor(
    readonly queues: DlqQueues,
    private readonly stopping: AbortSignal,
  ) {}

  #inTurn<T>(work: () => Promise<T>): Promise<T> {
    const done = this.#turn.then(work, work);
    this.#turn = done.catch(() => {});
    return done;
  }

  /** The last listing while fresh, else a new walk (walkDeadLetters, as `consumer dlq list`). */
  listing(again = false): Promise<DeadLetterListing> {
    return this.#inTurn(async () => {
      if (!again && this.#listing !== undefined && performance.now() - this.#listedAt < LISTING_FRESH_MS) {
        return this.#listing;
      }
      const walk = await walkDeadLetters(this.queues, this.stopping, listed, LETTERS_KEPT);
      this.#listing = {
        letters: walk.kept,
        received: walk.received,
        complete: walk.complete,
        readAt: new Date().toISOString(),
      };
      this.#listedAt = performance.now();
      return this.#listing;
    });
  }

  /** The last listing, however old (a live refresh shows it as read); a walk when there is none yet. */
  lastListing(): Promise<DeadLetterListing> {
    return this.#listing === undefined ? this.listing() : Promise.resolve(this.#listing);
  }

  /**
   * Moves the messages of `ids` (DLQ message ids) back to the queue: redrive, as `consumer redrive
   * --id`, send then delete. The next listing walks again.
   */
  redrive(ids: readonly string[]): Promise<RedriveSummary> {
    return this.#inTurn(async () => {
      try {
        return await redrive(this.queues, { filter: { ids: new Set(ids) }, dryRun: false }, this.stopping);
      } finally {
        this.#listing = undefined;
      }
    });
  }
}
