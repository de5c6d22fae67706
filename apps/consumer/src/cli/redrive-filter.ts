import { forTerminal } from "@outbox/shared";
import { durationOption, usageError } from "@outbox/shared/command-line";
import type { DeadLetter } from "./dead-letters.js";

/** Which dead letters `consumer redrive` moves: all of them when every field is absent. */
export interface RedriveFilter {
  /** Event ids or DLQ message ids; a message matches if either of its ids is listed. */
  readonly ids?: ReadonlySet<string>;
  readonly eventType?: string;
  /** Only messages at least this old (SentTimestamp), in ms. */
  readonly olderThanMs?: number;
  /** Only messages younger than this, in ms. */
  readonly newerThanMs?: number;
}

/**
 * The shape of a dead letter's id as `--id` takes it: an event id (a UUID) or an SQS MessageId (a
 * UUID on AWS, checked loosely for other SQS-compatible servers). Anything else cannot match.
 */
export const DEAD_LETTER_ID = /^[\w.:-]{1,128}$/;

/** The filter the options give; a bad value is a usage error (exit 64) before anything is received. */
export function parseRedriveFilter(
  values: Readonly<Record<string, string | boolean | undefined>>,
  usage: string,
): RedriveFilter {
  const { id, "event-type": eventType } = values;
  if (id !== undefined && (typeof id !== "string" || id.trim() === "")) {
    return usageError(usage, "--id needs an event id or a message id (several: comma-separated)");
  }
  if (eventType !== undefined && (typeof eventType !== "string" || eventType === "")) {
    return usageError(usage, "--event-type needs an event type");
  }
  const olderThanMs = durationOption(usage, "older-than", values["older-than"]);
  const newerThanMs = durationOption(usage, "newer-than", values["newer-than"]);
  if (olderThanMs !== undefined && newerThanMs !== undefined && newerThanMs <= olderThanMs) {
    return usageError(usage, "--newer-than must be longer than --older-than, or nothing can match");
  }
  const ids = id === undefined ? undefined : id.split(",").map((part) => part.trim());
  // Checked now: an id that cannot match anything would otherwise be found out after a walk of the DLQ.
  const bad = ids?.find((part) => !DEAD_LETTER_ID.test(part));
  if (bad !== undefined) {
    return usageError(usage, `--id needs event ids or message ids, got "${forTerminal(bad, 80)}"`);
  }
  return {
    ids: ids === undefined ? undefined : new Set(ids),
    eventType,
    olderThanMs,
    newerThanMs,
  };
}

/** Whether `letter` is one to move. A message without a SentTimestamp matches no age bound. */
export function matchesFilter(filter: RedriveFilter, letter: DeadLetter): boolean {
  if (filter.ids !== undefined) {
    const listed =
      filter.ids.has(letter.messageId) || (letter.eventId !== null && filter.ids.has(letter.eventId));
    if (!listed) return false;
  }
  if (filter.eventType !== undefined && letter.eventType !== filter.eventType) return false;
  const ageMs = letter.ageSeconds === null ? null : letter.ageSeconds * 1_000;
  if (filter.olderThanMs !== undefined && (ageMs === null || ageMs < filter.olderThanMs)) return false;
  if (filter.newerThanMs !== undefined && (ageMs === null || ageMs >= filter.newerThanMs)) return false;
  return true;
}
