import type { Capacity } from "@outbox/shared";
import { buildReady, type ReadyDeps } from "./build-ready.js";
import type { ClaimedRow } from "./claim-batch.js";
import { type ReadyRow, takeChunk } from "./plan-chunks.js";
import { type ChunkContext, type ChunkDeps, sendChunk } from "./send-chunk.js";

export interface StreamDeps extends ReadyDeps, ChunkDeps {
  /** The relay's publish lanes, shared by every batch in flight. */
  readonly lanes: Capacity;
}

/**
 * Sends a batch's rows (in seq order) through the relay's publish lanes as they become ready: every
 * unkeyed row and each key's first row at once, and a key's next row as soon as the chunk carrying
 * the one before it returned — answered and marked (or released, which holds the rest of the key
 * back: see BatchOutcome). A key therefore never has two rows in flight, and its next event is
 * published only after the previous one is marked; every other key streams on through whichever lane
 * is free, with no wave for the slowest request to hold up.
 *
 * `handedOver` is called once every row is sent or decided: the batch needs no more lanes, so the
 * next one may take them while this one's last requests are answered. Resolves once every row has an
 * outcome; rejects (after the requests under way returned) if building or sending one threw.
 */
export async function streamRows(
  rows: readonly ClaimedRow[],
  context: ChunkContext & { readonly deps: StreamDeps },
  handedOver: () => void,
): Promise<void> {
  const { deps, outcome, batch } = context;
  /** Each keyed row's next row of the same key in this batch. */
  const successor = new Map<ClaimedRow, ClaimedRow>();
  const lastOfKey = new Map<string, ClaimedRow>();
  const first: ClaimedRow[] = [];
  for (const row of rows) {
    const before = row.orderingKey === null ? undefined : lastOfKey.get(row.orderingKey);
    if (before) successor.set(before, row);
    else first.push(row);
    if (row.orderingKey !== null) lastOfKey.set(row.orderingKey, row);
  }

  const ready: ReadyRow[] = [];
  /** Rows neither handed to a lane nor decided yet. */
  let unsent = rows.length;
  /** Builds and requests under way: the batch is done when none is and nothing is ready. */
  let running = 0;
  let thrown: { error: unknown } | undefined;
  let wake = () => {};
  const settled = (count: number) => {
    unsent -= count;
    if (unsent === 0) handedOver();
  };
  const track = (work: Promise<void>) => {
    running += 1;
    work
      .catch((error: unknown) => {
        thrown ??= { error };
      })
      .finally(() => {
        running -= 1;
        wake();
      });
  };
  const successorsOf = (done: readonly ClaimedRow[]) => done.flatMap((row) => successor.get(row) ?? []);
  const admit = (group: ClaimedRow[]): void =>
    track(
      buildReady(group, outcome, deps, batch).then((built) => {
        ready.push(...built);
        settled(group.length - built.length);
        // A row decided here (held back, dead, failed) stopped its key: its successors are released
        // the same way, link by link, so that no row is left without an outcome.
        const taken = new Set(built.map(({ row }) => row));
        const next = successorsOf(group.filter((row) => !taken.has(row)));
        if (next.length > 0) admit(next);
      }),
    );

  admit(first);
  for (;;) {
    if (ready.length > 0 && thrown === undefined) {
      await deps.lanes.reserve(1, 1);
      // Only this loop takes from `ready`: what was there is still there.
      const chunk = takeChunk(ready);
      settled(chunk.rows.length);
      track(
        sendChunk(chunk, context)
          .then(() => {
            const next = successorsOf(chunk.rows);
            if (next.length > 0) admit(next);
          })
          .finally(() => deps.lanes.release(1)),
      );
      continue;
    }
    if (running === 0) break;
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
  }
  if (thrown) throw thrown.error;
}
