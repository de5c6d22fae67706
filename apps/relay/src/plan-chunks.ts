import { MAX_BATCH_ENTRIES, MAX_MESSAGE_BYTES } from "@outbox/client";
import type { ClaimedRow } from "./claim-batch.js";
import type { PublishEntry } from "./publisher.js";

export interface ReadyRow {
  readonly row: ClaimedRow;
  readonly topicArn: string;
  readonly entry: PublishEntry;
  readonly bytes: number;
}

/** One PublishBatch request: one topic, ≤ 10 entries, ≤ 256 KiB in total. */
export interface Chunk {
  readonly topicArn: string;
  readonly rows: ClaimedRow[];
  readonly entries: PublishEntry[];
  bytes: number;
}

/** Packs rows into requests, per topic, keeping seq order within a topic. */
export function planChunks(ready: readonly ReadyRow[]): Chunk[] {
  const done: Chunk[] = [];
  const open = new Map<string, Chunk>();
  for (const item of ready) {
    let chunk = open.get(item.topicArn);
    if (
      chunk &&
      (chunk.entries.length === MAX_BATCH_ENTRIES || chunk.bytes + item.bytes > MAX_MESSAGE_BYTES)
    ) {
      done.push(chunk);
      chunk = undefined;
    }
    if (!chunk) {
      chunk = { topicArn: item.topicArn, rows: [], entries: [], bytes: 0 };
      open.set(item.topicArn, chunk);
    }
    chunk.rows.push(item.row);
    chunk.entries.push(item.entry);
    chunk.bytes += item.bytes;
  }
  return [...done, ...open.values()];
}
