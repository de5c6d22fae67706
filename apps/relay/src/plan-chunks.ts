import { MAX_BATCH_ENTRIES } from "@outbox/client/internal";
import type { ClaimedRow } from "./claim-batch.js";
import type { PublishEntry } from "./publisher.js";

export interface ReadyRow {
  readonly row: ClaimedRow;
  readonly topicArn: string;
  readonly entry: PublishEntry;
  readonly bytes: number;
  /** The topic's limit the entry was checked against: each entry's, and its request's total. */
  readonly limitBytes: number;
}

/**
 * One PublishBatch request: one topic, ≤ 10 entries, their sum within the topic's limit (SNS bounds
 * a PublishBatch by the topic's MaximumMessageSize, as one message: 256 KiB by default, 1 MiB at most).
 */
export interface Chunk {
  readonly topicArn: string;
  readonly rows: ClaimedRow[];
  readonly entries: PublishEntry[];
  /** Each entry's size, index for index with `rows`. */
  readonly sizes: number[];
  /** The topic's limit the chunk was planned with. */
  readonly limitBytes: number;
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
      (chunk.entries.length === MAX_BATCH_ENTRIES || chunk.bytes + item.bytes > chunk.limitBytes)
    ) {
      done.push(chunk);
      chunk = undefined;
    }
    if (!chunk) {
      chunk = {
        topicArn: item.topicArn,
        rows: [],
        entries: [],
        sizes: [],
        limitBytes: item.limitBytes,
        bytes: 0,
      };
      open.set(item.topicArn, chunk);
    }
    chunk.rows.push(item.row);
    chunk.entries.push(item.entry);
    chunk.sizes.push(item.bytes);
    chunk.bytes += item.bytes;
  }
  return [...done, ...open.values()];
}

/**
 * Takes the next request out of `ready`: the first row's topic, up to 10 of its rows within the
 * topic's limit, in `ready`'s order. The rows in `ready` share no key (each key's next row joins it
 * only once the one before was marked), so which of them go together does not touch any order.
 */
export function takeChunk(ready: ReadyRow[]): Chunk {
  const [head] = ready;
  if (head === undefined) throw new Error("takeChunk: nothing ready");
  const chunk: Chunk = {
    topicArn: head.topicArn,
    rows: [],
    entries: [],
    sizes: [],
    limitBytes: head.limitBytes,
    bytes: 0,
  };
  let kept = 0;
  for (const item of ready) {
    if (
      chunk.entries.length < MAX_BATCH_ENTRIES &&
      item.topicArn === chunk.topicArn &&
      chunk.bytes + item.bytes <= chunk.limitBytes
    ) {
      chunk.rows.push(item.row);
      chunk.entries.push(item.entry);
      chunk.sizes.push(item.bytes);
      chunk.bytes += item.bytes;
    } else {
      ready[kept] = item;
      kept += 1;
    }
  }
  ready.length = kept;
  return chunk;
}
