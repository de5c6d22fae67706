import type { CommittedTransaction } from "./racing-producers.js";

/** An outbox row as the order check needs it. */
export interface KeyedEvent {
  readonly id: string;
  readonly orderingKey: string | null;
  readonly seq: number;
}

export interface KeyOrder {
  /** Events the bus took after a later event (higher `seq`) of their key. */
  readonly outOfOrder: number;
  /** Events the bus never took although it took a later event of their key: overtaken for good. */
  readonly overtaken: number;
  /** Up to five inversions, for the report. */
  readonly examples: readonly { key: string; seq: number; after: number }[];
}

/**
 * Per-key order of what reached the bus (`accepted`: event ids in the order the topic took them,
 * repeats included) against the outbox's `seq`. A repeat of an event already taken says nothing
 * about order (the inbox absorbs it), so only each event's first arrival counts.
 */
export function judgeKeyOrder(events: readonly KeyedEvent[], accepted: readonly string[]): KeyOrder {
  const byId = new Map(events.map((event) => [event.id, event]));
  const seen = new Set<string>();
  const highest = new Map<string, number>();
  const examples: { key: string; seq: number; after: number }[] = [];
  let outOfOrder = 0;
  for (const id of accepted) {
    const event = byId.get(id);
    if (!event || seen.has(id)) continue;
    seen.add(id);
    if (event.orderingKey === null) continue;
    const before = highest.get(event.orderingKey) ?? Number.NEGATIVE_INFINITY;
    if (event.seq < before) {
      outOfOrder += 1;
      if (examples.length < 5) examples.push({ key: event.orderingKey, seq: event.seq, after: before });
    } else highest.set(event.orderingKey, event.seq);
  }
  const overtaken = events.filter(
    (event) =>
      event.orderingKey !== null &&
      !seen.has(event.id) &&
      (highest.get(event.orderingKey) ?? Number.NEGATIVE_INFINITY) > event.seq,
  ).length;
  return { outOfOrder, overtaken, examples };
}

/**
 * Producer-side order: an event whose `seq` is below that of an event of its key from a transaction
 * whose COMMIT was answered before this one's COMMIT was sent. That transaction committed first, as
 * any client could tell, and the relay publishes in `seq` order: each such event would reach the bus
 * ahead of one committed before it. (Two commits in flight together give no order to check.)
 */
export function commitOrderInversions(
  committed: readonly CommittedTransaction[],
  seqOf: ReadonlyMap<string, number>,
): number {
  const byKey = new Map<string, { sent: number; answered: number; seqs: number[] }[]>();
  for (const transaction of committed) {
    transaction.ids.forEach((id, at) => {
      const key = transaction.keys[at];
      const seq = seqOf.get(id);
      if (key == null || seq === undefined) return;
      const windows = byKey.get(key) ?? [];
      let window = windows.find((candidate) => candidate.sent === transaction.commitSent);
      if (!window) {
        window = { sent: transaction.commitSent, answered: transaction.commitAnswered, seqs: [] };
        windows.push(window);
      }
      window.seqs.push(seq);
      byKey.set(key, windows);
    });
  }
  let inversions = 0;
  for (const windows of byKey.values()) {
    for (const later of windows) {
      const before = windows.filter((earlier) => earlier.answered < later.sent);
      const highest = Math.max(Number.NEGATIVE_INFINITY, ...before.flatMap((earlier) => earlier.seqs));
      inversions += later.seqs.filter((seq) => seq < highest).length;
    }
  }
  return inversions;
}
