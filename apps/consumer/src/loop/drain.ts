import { Deadline } from "@outbox/client";
import { type DrainDeadline, settlesBefore, settlesWithin } from "@outbox/shared";
import { DrainExpiredError } from "../errors.js";

// The drain deadline, enforced: once a drain starts, no message starts with less than the safety
// margin left, none runs past the deadline, and when it passes every message still running is rolled
// back and released. The time is the drain's own Deadline (runDaemon's, or the library default),
// never a second timer. Every message deadline hangs off the DrainDeadline, which exists before any
// drain: a message received long before the stop must be rolled back when the drain expires, with a
// DrainExpiredError (released at once, not retried later).

/** After the drain deadline: time to release what was aborted and flush deletes (taken from the shutdown overhead). */
const AFTER_DEADLINE_GRACE_MS = 1_000;

/** During the drain: too little time left to give a message more than the safety margin `marginMs`. */
export function tooLateToStart(drain: DrainDeadline, marginMs: number): boolean {
  return drain.remainingMs() <= marginMs;
}

/**
 * A message's deadline: its handler timeout, cut to what the drain has left. A child of the drain's:
 * linking to a Deadline is a Set entry, linking to an AbortSignal an EventTarget listener, whose add
 * and remove scan the listeners of every message in flight.
 */
export function messageDeadline(drain: DrainDeadline, handlerTimeoutMs: number): Deadline {
  return Deadline.after(Math.min(handlerTimeoutMs, drain.remainingMs()), drain.deadline);
}

/** What a drain waits for, in this order. */
export interface DrainSteps {
  /** Every message received ends, including any a poll still open brings. */
  readonly finished: Promise<void>;
  /** The messages in hand now end: after the deadline aborted them, they are rolled back and released. */
  readonly inHand: () => Promise<void>;
  /** Once no message is in hand: no more lease renewals. */
  readonly stopHeartbeat: () => Promise<void>;
  /** The last deletes. */
  readonly flushDeletes: () => Promise<void>;
}

/**
 * Drains within `deadline`: waits for the messages until it passes; past it, aborts every message
 * deadline and gives the messages in hand a short grace (a message released now is picked up at once
 * elsewhere, one abandoned would wait for its lease to run out); then stops the heartbeat and
 * flushes the deletes within what is left of the deadline plus the grace. Resolves whether the
 * messages ended and the deletes went out in time.
 */
export async function drainWithin(
  drain: DrainDeadline,
  deadline: Deadline,
  steps: DrainSteps,
): Promise<boolean> {
  // Messages in flight end the moment the deadline passes, not when this wait notices it.
  const unlink = drain.follow(deadline, new DrainExpiredError("drain timed out"));
  let inTime: boolean;
  try {
    inTime = await settlesBefore(steps.finished, deadline);
  } finally {
    unlink();
  }
  if (!inTime) await settlesWithin(steps.inHand(), AFTER_DEADLINE_GRACE_MS);
  await steps.stopHeartbeat();
  const flushed = await settlesWithin(steps.flushDeletes(), deadline.remainingMs() + AFTER_DEADLINE_GRACE_MS);
  return inTime && flushed;
}
